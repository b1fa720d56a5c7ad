import { Injectable } from '@nestjs/common';
import type { ModuleRef } from '@nestjs/core';
import { HoldfastError } from '@holdfast/core/kit';
import type { FailoverMetadata } from '../decorators/failover-options';
import { StoreWriteFailed } from '../errors';
import { FailoverRegistry } from '../explorer/failover.registry';
import type { FailoverMetrics } from '../metrics/failover.metrics';
import type { StoreGuard } from '../store/store-guard';
import { FailoverStores } from '../tenant/failover-stores';
import { FailoverAnswers } from './failover-answers';
import { bypassCause, type FailoverBypass } from './failover-bypass';
import {
  callUpstream,
  settle,
  type FailoverCall,
  type FailoverInvocation,
  type Upstream,
  type UpstreamCall,
} from './failover-call';
import { FailoverCallTracing } from './failover-call-tracing';
import { FailoverCalls } from './failover-calls';
import type { FailoverFlights } from './failover-flights';
import type { FailoverFreshness, FreshnessRoutes } from './failover-freshness';
import type { FailoverKeeper } from './failover-keeper';
import { FailoverParts } from './failover-parts';
import type { FailoverRecovery } from './failover-recovery';
import type { FailoverRuntimes } from './failover-runtimes';
import type { FailoverWriter } from './failover-writer';
import { guarded } from './guarded-store';

/**
 * Runs a @Failover method: calls the upstream (through a circuit breaker when configured),
 * keeps each good value (or each slice of it) through the {@link FailoverKeeper}, and answers
 * from the store through the {@link FailoverRecovery} when the upstream fails. Reached from the
 * decorated method by property injection.
 */
@Injectable()
export class FailoverExecutor {
  private readonly storeGuard: StoreGuard;
  private readonly runtimes: FailoverRuntimes;
  private readonly writer: FailoverWriter;
  private readonly metrics: FailoverMetrics;
  private readonly keeper: FailoverKeeper;
  private readonly recovery: FailoverRecovery;
  private readonly bypass: FailoverBypass;
  private readonly flights: FailoverFlights;
  private readonly freshness: FailoverFreshness;
  private readonly neverThrow: boolean;
  private readonly routes: FreshnessRoutes = {
    proceed: <T>(call: FailoverCall) => this.flight<T>(call),
    refresh: <T>(call: FailoverCall) => this.call<T>(call),
  };

  constructor(
    parts: FailoverParts,
    answers: FailoverAnswers,
    private readonly calls: FailoverCalls,
    private readonly tracing: FailoverCallTracing,
    private readonly stores: FailoverStores,
    private readonly registry: FailoverRegistry,
  ) {
    ({ guard: this.storeGuard, runtimes: this.runtimes, writer: this.writer, metrics: this.metrics } = parts);
    ({
      keeper: this.keeper,
      recovery: this.recovery,
      freshness: this.freshness,
      flights: this.flights,
      bypass: this.bypass,
    } = answers);
    this.neverThrow = parts.options.exceptionPolicy === 'never-throw';
  }

  /** True while calls skip the store (it was unreachable moments ago): readiness should say so. */
  get storeSkipped(): boolean {
    return !this.storeGuard.closed;
  }

  /**
   * Runs one call of a @Failover method, inside a span `failover <name>` when an OpenTelemetry
   * SDK records (its attributes say the outcome and whether the answer is stale).
   */
  execute<T>(
    meta: FailoverMetadata,
    instance: unknown,
    method: Upstream,
    args: unknown[],
  ): Promise<T | null> {
    const upstream: UpstreamCall = { instance, method, args };
    return this.tracing.traced(meta.name, (trace) => this.run<T>({ meta, upstream, trace }));
  }

  /**
   * Written with `then` rather than `async` (like the recovery and the store guard): an
   * `await` on a failed upstream resumes the function only to throw into it and catch again,
   * which shows on a recovery answered by a SQLite read of a few microseconds.
   */
  private run<T>(invocation: FailoverInvocation): Promise<T | null> {
    try {
      const call = this.calls.resolve(invocation);
      if (call instanceof Promise) return call.then((resolved) => this.answer<T>(invocation, resolved));
      return this.answer<T>(invocation, call);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The call answered: the plain upstream when it has no store or key, else through the window or the flight. */
  private answer<T>(invocation: FailoverInvocation, call: FailoverCall | undefined): Promise<T | null> {
    if (!call) return this.plain<T>(invocation);
    if (call.meta.freshMs) return this.freshness.serve<T>(call, this.routes);
    return this.flight<T>(call);
  }

  /** The call, sharing the attempt of a call with its key already running when `singleFlight`. */
  private flight<T>(call: FailoverCall): Promise<T | null> {
    if (!call.meta.singleFlight) return this.call<T>(call);
    return this.flights.share(call, (flightCall) => this.call<T>(flightCall));
  }

  /**
   * The upstream called as the undecorated method would be (no circuit breaker: with no key
   * there is nothing to serve while it is open): its value, or its error (`null` with
   * `exceptionPolicy: 'never-throw'`, as for any call nothing could be recovered for).
   */
  private plain<T>(invocation: FailoverInvocation): Promise<T | null> {
    let result: unknown;
    try {
      result = callUpstream(invocation.upstream);
    } catch (error) {
      return this.unanswered<T>(invocation, error);
    }
    return Promise.resolve(result).then(
      (value) => {
        settle(this.metrics, invocation, 'success');
        return value as T;
      },
      (error: unknown) => this.unanswered<T>(invocation, error),
    );
  }

  /** The upstream failed and no stored value can be served: its own error (or null). */
  private unanswered<T>(invocation: FailoverInvocation, error: unknown): Promise<T | null> {
    this.metrics.upstreamFailed(invocation.meta.name, error);
    settle(this.metrics, invocation, 'failed');
    return this.neverThrow ? Promise.resolve(null) : Promise.reject(error);
  }

  /**
   * The recovery of a failed call. It reports its own store failures and answers with the
   * upstream's error; should anything of Holdfast's still escape it, the caller gets the
   * upstream's error all the same, never Holdfast's.
   */
  private recover<T>(call: FailoverCall, error: unknown): T | null | Promise<T | null> {
    try {
      return this.recovery.recover<T>(call, error);
    } catch (recoveryError) {
      if (recoveryError === error) throw error;
      this.bypass.report(call.meta.name, bypassCause(recoveryError), recoveryError);
      return this.unanswered<T>(call, error);
    }
  }

  /** The upstream, then the value kept or the failure recovered (settled in one continuation). */
  private call<T>(call: FailoverCall): Promise<T | null> {
    const { runtime, upstream } = call;
    let result: unknown;
    try {
      result = runtime.breaker
        ? runtime.breaker.execute(() => callUpstream(upstream))
        : callUpstream(upstream);
    } catch (error) {
      // A synchronous throw is recovered in this turn, as the awaited call did.
      try {
        return Promise.resolve(this.recover<T>(call, error));
      } catch (recoveryError) {
        return Promise.reject(recoveryError);
      }
    }
    return (result instanceof Promise ? result : Promise.resolve(result)).then(
      (value) => this.succeeded(call, value as T),
      (error: unknown) => this.recover<T>(call, error),
    );
  }

  /** A good value: kept (waiting for the store when the write is synchronous), then returned. */
  private succeeded<T>(call: FailoverCall, value: T): T | Promise<T> {
    if (value !== null && value !== undefined) {
      if (this.storeGuard.open) {
        this.metrics.storeSkipped('store');
      } else {
        // Written at once when the store can (a write that cannot wait needs no bound).
        let kept: ReturnType<FailoverKeeper['keep']>;
        try {
          kept = this.keeper.keep(call, value, this.storeGuard.closed);
        } catch (keepError) {
          // The value is the caller's whatever happened to its copy in the store.
          this.bypass.report(call.meta.name, bypassCause(keepError), keepError);
          kept = undefined;
        }
        if (kept === true) this.storeGuard.succeededNow();
        else if (kept === false) this.storeGuard.failedNow(new StoreWriteFailed());
        else if (kept)
          return guarded(this.storeGuard, this.metrics, 'store', async () => {
            // A failed write (already logged and counted) is a failure for the store breaker too.
            if ((await kept) === false) throw new StoreWriteFailed();
          }).then(
            () => {
              settle(this.metrics, call, 'success');
              return value;
            },
            (keepError: unknown) => {
              this.bypass.report(call.meta.name, bypassCause(keepError), keepError);
              settle(this.metrics, call, 'success');
              return value;
            },
          );
      }
    }
    settle(this.metrics, call, 'success');
    return value;
  }

  /** Resolves when every async store/delete submitted so far has reached the store. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  /** Unexpired entries of a failover in the caller's store (one COUNT(*) on SQL stores). */
  async liveEntryCount(name: string): Promise<number> {
    const found = this.registry.get(name);
    if (!found)
      throw new HoldfastError(`No failover named '${name}' was discovered`, 'HOLDFAST_FAILOVER_UNKNOWN');
    const store = await this.stores.forCall();
    if (!store.countLive)
      throw new HoldfastError(
        `The ${store.description ?? 'custom'} store cannot count entries`,
        'HOLDFAST_FAILOVER_UNSUPPORTED',
      );
    return store.countLive(found.metadata.effectiveName, store.now ? await store.now() : new Date());
  }

  /**
   * Builds a failover's key generator and splitter once, at bootstrap: a class is the app's
   * provider when it registers one, else it is created in the declaring module (`moduleRef`)
   * with its own injected dependencies; an instance is used as it is.
   */
  prepare(meta: FailoverMetadata, moduleRef?: ModuleRef): Promise<void> {
    return this.runtimes.prepare(meta, moduleRef);
  }
}
