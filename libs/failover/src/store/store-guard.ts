import { DeadlineQueue, type HoldfastTimers } from '@holdfast/core/kit';
import { FailoverError, StoreSkippedError, StoreTimeoutError, StoreWriteFailed } from '../errors';

interface Pending {
  reject: (error: unknown) => void;
  operation: string;
}

/**
 * Bounds every wait a caller has on the store (the pool wait included: it is inside the
 * operation) and, after `failures` consecutive failures or timeouts, skips the store for every
 * call until one trial after `halfOpenAfter` succeeds: while the database is unreachable a
 * decorated call costs no wait at all. The operation that timed out goes on in the background;
 * its result is dropped.
 *
 * With a probe (`probeWith`), an open breaker does not wait for a caller's trial: every
 * `probeEvery` the probe (the store's ping, bounded like any wait) runs in the background, and
 * its first success closes the breaker, so the store is back in use within about `probeEvery` of
 * the database answering again, and a readiness probe sees it (`open`).
 *
 * Written for the hot path: the pending waits share one timer (core's DeadlineQueue, no timer
 * per call), and the breaker is a counter and a timestamp.
 */
export class StoreGuard {
  private readonly pending: DeadlineQueue<Pending>;
  private consecutive = 0;
  private openedAt = 0;
  private state: 'closed' | 'open' | 'trial' = 'closed';
  private listener?: (open: boolean) => void;
  private probe?: { run: () => Promise<unknown>; timers: HoldfastTimers; name: string; everyMs: number };

  constructor(
    readonly timeoutMs: number,
    private readonly failures = 3,
    private readonly halfOpenAfterMs = 5_000,
  ) {
    this.pending = new DeadlineQueue<Pending>(timeoutMs, (entry) =>
      entry.reject(new StoreTimeoutError(entry.operation, this.timeoutMs)),
    );
  }

  /** True while the store is being skipped. */
  get open(): boolean {
    return this.state === 'open' && performance.now() - this.openedAt < this.halfOpenAfterMs;
  }

  /** True while the store is in use as normal (no outage, no trial under way). */
  get closed(): boolean {
    return this.state === 'closed';
  }

  /**
   * A synchronous store operation (it cannot wait on a pool or a network, so it needs no
   * bound) answered: only the breaker's bookkeeping. Use it while `closed`.
   */
  succeededNow(): void {
    if (this.consecutive) this.succeeded();
  }

  /** A synchronous store operation failed with `error`. */
  failedNow(error: unknown): void {
    this.record(error);
  }

  /**
   * While the breaker is open, runs `run` every `everyMs` (a timer `name` of `timers`) until it
   * succeeds, which closes the breaker. `stop()` ends it.
   */
  probeWith(run: () => Promise<unknown>, timers: HoldfastTimers, name: string, everyMs = 1_000): void {
    this.probe = { run, timers, name, everyMs: Math.min(everyMs, this.halfOpenAfterMs) };
  }

  /** No more background probes (application shutdown). */
  stop(): void {
    if (this.probe) this.probe.timers.clear(this.probe.name);
    this.probe = undefined;
  }

  /** Called once when the store starts being skipped, and once when it is back. */
  onChange(listener: (open: boolean) => void): void {
    this.listener = listener;
  }

  /** Written with `then` rather than `async`: it sits on every recovery and store of a call. */
  run<T>(operation: string, work: () => Promise<T>): Promise<T> {
    if (this.state !== 'closed') {
      // One trial at a time once halfOpenAfter has passed; everyone else skips.
      if (this.state === 'trial' || performance.now() - this.openedAt < this.halfOpenAfterMs)
        return Promise.reject(new StoreSkippedError());
      this.state = 'trial';
    }
    let started: Promise<T>;
    try {
      started = work();
    } catch (error) {
      started = Promise.reject(error);
    }
    return this.bounded(operation, started).then(
      (result) => {
        this.succeeded();
        return result;
      },
      (error: unknown) => {
        this.record(error);
        throw error;
      },
    );
  }

  private record(error: unknown): void {
    // A row the codec cannot read says nothing about reachability; a timeout and a failed write do.
    if (
      error instanceof StoreTimeoutError ||
      error instanceof StoreWriteFailed ||
      !(error instanceof FailoverError)
    )
      this.failed();
    else this.succeeded();
  }

  private succeeded(): void {
    this.consecutive = 0;
    if (this.state !== 'closed') {
      this.state = 'closed';
      this.listener?.(false);
    }
  }

  private failed(): void {
    this.consecutive++;
    if (this.state === 'trial' || (this.state === 'closed' && this.consecutive >= this.failures)) {
      const wasClosed = this.state === 'closed';
      this.state = 'open';
      this.openedAt = performance.now();
      if (wasClosed) this.listener?.(true);
      this.armProbe();
    }
  }

  private armProbe(): void {
    const probe = this.probe;
    if (!probe) return;
    probe.timers.set(probe.name, probe.everyMs, () => {
      if (this.state !== 'open' || this.probe !== probe) return;
      let started: Promise<unknown>;
      try {
        started = probe.run();
      } catch (error) {
        started = Promise.reject(error);
      }
      this.bounded('probe', started).then(
        () => {
          if (this.state === 'open') this.succeeded();
        },
        () => {
          if (this.state !== 'open') return;
          this.openedAt = performance.now();
          this.armProbe();
        },
      );
    });
  }

  /** `work`, or a StoreTimeoutError once `timeoutMs` has passed (no breaker bookkeeping). */
  bounded<T>(operation: string, work: Promise<T>): Promise<T> {
    if (!(this.timeoutMs > 0) || !Number.isFinite(this.timeoutMs)) return work;
    return new Promise<T>((resolve, reject) => {
      const deadline = this.pending.add({ reject, operation });
      work.then(
        (value) => {
          this.pending.remove(deadline);
          resolve(value);
        },
        (error) => {
          this.pending.remove(deadline);
          reject(error);
        },
      );
    });
  }
}

export function isStoreSkipped(error: unknown): boolean {
  return error instanceof StoreSkippedError;
}
