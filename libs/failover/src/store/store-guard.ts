import {
  BrokenCircuitError,
  CircuitState,
  ConsecutiveBreaker,
  circuitBreaker,
  handleWhen,
  type CircuitBreakerPolicy,
} from 'cockatiel';
import { FailoverError } from '../errors';

/** A store wait that passed `storeTimeout`. */
export class StoreTimeoutError extends FailoverError {
  constructor(
    readonly operation: string,
    readonly timeoutMs: number,
  ) {
    super(
      `Failover store ${operation} took longer than storeTimeout (${timeoutMs} ms): the call went on without the store`,
      'HOLDFAST_FAILOVER_STORE_TIMEOUT',
    );
  }
}

/**
 * Bounds every wait a caller has on the store (the pool wait included: it is inside the
 * operation) and, after `failures` consecutive failures or timeouts, skips the store for every
 * call until a trial after `halfOpenAfter` succeeds: while the database is unreachable a
 * decorated call costs no wait at all. The operation that timed out goes on in the background;
 * its result is dropped.
 */
export class StoreGuard {
  private readonly breaker: CircuitBreakerPolicy;

  constructor(
    readonly timeoutMs: number,
    failures = 3,
    halfOpenAfterMs = 5_000,
  ) {
    // Timeouts and driver errors count; a row the codec cannot read says nothing about reachability.
    this.breaker = circuitBreaker(
      handleWhen((error) => error instanceof StoreTimeoutError || !(error instanceof FailoverError)),
      {
        halfOpenAfter: halfOpenAfterMs,
        breaker: new ConsecutiveBreaker(failures),
      },
    );
  }

  /** True while the store is being skipped. */
  get open(): boolean {
    return this.breaker.state === CircuitState.Open;
  }

  /** Called once when the store starts being skipped, and once when it is back. */
  onChange(listener: (open: boolean) => void): void {
    this.breaker.onBreak(() => listener(true));
    this.breaker.onReset(() => listener(false));
  }

  run<T>(operation: string, work: () => Promise<T>): Promise<T> {
    return this.breaker.execute(() => this.bounded(operation, work()));
  }

  private bounded<T>(operation: string, work: Promise<T>): Promise<T> {
    if (!(this.timeoutMs > 0) || !Number.isFinite(this.timeoutMs)) return work;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreTimeoutError(operation, this.timeoutMs)), this.timeoutMs);
      timer.unref();
    });
    work.catch(() => undefined); // a late failure of an abandoned wait is not unhandled
    return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
  }
}

export function isStoreSkipped(error: unknown): boolean {
  return error instanceof BrokenCircuitError;
}
