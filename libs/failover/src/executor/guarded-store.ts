import type { Logger } from '@nestjs/common';
import type { FailoverMetrics } from '../metrics/failover.metrics';
import type { FailoverStore } from '../store/failover-store';
import { StoreTimeoutError, StoreWriteFailed } from '../errors';
import { StoreGuard, isStoreSkipped } from '../store/store-guard';

/**
 * The store's clock: the database's for SQL stores, so skewed instances agree on what is live.
 * `monotonic`: a `performance.now()` reading taken a moment ago (see `FailoverStore.clock`).
 */
export function storeClock(store: FailoverStore, monotonic?: number): number {
  return store.clock ? store.clock(monotonic) : Date.now();
}

/**
 * Bounds every store wait of a caller, and skips the store while it is unreachable (the
 * {@link StoreGuard}), logging when it goes away and comes back.
 */
export function failoverStoreGuard(storeTimeout: number, logger: Logger): StoreGuard {
  const guard = new StoreGuard(storeTimeout);
  guard.onChange((open) =>
    open
      ? logger.warn(
          `Failover store unreachable (${storeTimeout} ms storeTimeout passed 3 times in a row, or it failed): ` +
            'calls skip it until it answers again',
        )
      : // A warning too: an outage is one warning when it starts and one when it ends.
        logger.warn('Failover store answers again: calls use it again'),
  );
  return guard;
}

/** A caller's wait on the store: bounded, skipped while the store is unreachable; never throws. */
export function guarded<R>(
  guard: StoreGuard,
  metrics: FailoverMetrics,
  operation: string,
  work: () => Promise<R>,
): Promise<R | undefined> {
  return guard.run(operation, work).then(undefined, (error: unknown) => {
    if (isStoreSkipped(error)) {
      metrics.storeSkipped(operation);
      return undefined;
    }
    if (error instanceof StoreWriteFailed) return undefined;
    if (!(error instanceof StoreTimeoutError)) throw error;
    metrics.storeError(`${operation}-timeout`);
    return undefined;
  });
}
