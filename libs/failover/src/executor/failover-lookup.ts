import type { Logger } from '@nestjs/common';
import type { FailoverMetadata } from '../decorator/failover-options';
import type { FailoverMetrics } from '../health/failover.metrics';
import type { PayloadType } from '../payload/payload-type';
import { NOT_NOW, canFindNow, type FailoverEntry, type FailoverStore } from '../store/failover-store';
import type { StoreGuard } from '../store/store-guard';
import type { FailoverWriter } from './failover-writer';
import { StoreWriteFailed, guarded, storeClock } from './guarded-store';

/**
 * Reads one stored entry for a recovery: pending writes first, then the store (bounded, or
 * synchronously when it can answer right now); an expired entry is deleted.
 */
export class FailoverLookup {
  constructor(
    private readonly writer: FailoverWriter,
    private readonly guard: StoreGuard,
    private readonly metrics: FailoverMetrics,
    private readonly logger: Logger,
  ) {}

  /**
   * One stored entry (pending writes first), or undefined; expired entries are deleted. Written
   * with `then` rather than `async` (like the store guard): it is the recovery path's every call.
   */
  lookup<T>(
    meta: FailoverMetadata,
    store: FailoverStore,
    key: string,
    type?: PayloadType,
  ): Promise<FailoverEntry<T> | undefined> {
    const pending = this.writer.pendingEntry(store, meta.effectiveName, key);
    if (pending === null) return Promise.resolve(undefined);
    if (pending)
      return Promise.resolve(this.unexpired(meta, store, key, { ...(pending as FailoverEntry<T>) }));
    return guarded(this.guard, this.metrics, 'find', () => store.find<T>(meta.effectiveName, key, type)).then(
      (entry) => (entry === undefined ? undefined : this.unexpired(meta, store, key, entry)),
      (storeError: unknown) => {
        this.recoveryFailed(meta, storeError);
        return undefined;
      },
    );
  }

  /**
   * The entry while it is live on the store's clock; an expired one is deleted (bounded wait).
   * `monotonic`: the caller's `performance.now()` reading, when it took one a moment ago.
   */
  unexpired<T>(
    meta: FailoverMetadata,
    store: FailoverStore,
    key: string,
    entry: FailoverEntry<T>,
    monotonic?: number,
  ): FailoverEntry<T> | undefined | Promise<undefined> {
    if (storeClock(store, monotonic) <= entry.expireOn.getTime()) return entry;
    const write = this.writer.delete(store, meta.name, meta.effectiveName, key);
    if (!write) return undefined;
    return guarded(this.guard, this.metrics, 'delete', async () => {
      if ((await write) === false) throw new StoreWriteFailed();
    }).then(() => undefined);
  }

  /**
   * `lookup` without a wait, when the store can read synchronously right now (SQLite with its
   * connection free, the memory store) and no write of the key is pending: NOT_NOW otherwise.
   * An expired entry is deleted as `lookup` does (a promise then, for the bounded delete).
   * `monotonic`: the caller's `performance.now()` reading of this call (the read takes
   * microseconds), for the expiry check.
   */
  lookupNow<T>(
    meta: FailoverMetadata,
    store: FailoverStore,
    key: string,
    type?: PayloadType,
    monotonic?: number,
  ): FailoverEntry<T> | undefined | Promise<undefined> | typeof NOT_NOW {
    if (!canFindNow(store) || !this.guard.closed) return NOT_NOW;
    if (this.writer.pendingEntry(store, meta.effectiveName, key) !== undefined) return NOT_NOW;
    let entry: FailoverEntry<T> | undefined | typeof NOT_NOW;
    try {
      entry = store.findNow<T>(meta.effectiveName, key, type);
    } catch (storeError) {
      this.guard.failedNow(storeError);
      this.recoveryFailed(meta, storeError);
      return undefined;
    }
    if (entry !== NOT_NOW) this.guard.succeededNow();
    if (entry === NOT_NOW || entry === undefined) return entry;
    return this.unexpired(meta, store, key, entry, monotonic);
  }

  recoveryFailed(meta: FailoverMetadata, storeError: unknown): void {
    this.metrics.storeError('find');
    this.logger.warn(
      `Failover '${meta.name}': recovery failed: ${(storeError as Error)?.message ?? storeError}`,
    );
  }
}
