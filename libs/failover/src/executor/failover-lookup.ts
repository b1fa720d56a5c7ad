import type { FailoverMetadata } from '../decorators/failover-options';
import { NOT_NOW, canFindNow, type FailoverEntry } from '../store/failover-store';
import { Injectable, Logger } from '@nestjs/common';
import type { FailoverCall } from './failover-call';
import { FailoverParts } from './failover-parts';
import { StoreWriteFailed } from '../errors';
import { guarded, storeClock } from './guarded-store';

const logger = new Logger('FailoverExecutor');

/**
 * Reads one stored entry for a recovery: pending writes first, then the store (bounded, or
 * synchronously when it can answer right now); an expired entry is deleted.
 */
@Injectable()
export class FailoverLookup {
  constructor(private readonly parts: FailoverParts) {}

  /**
   * The entry stored under `key` for the call (pending writes first), or undefined; expired
   * entries are deleted. Written with `then` rather than `async` (like the store guard): it is
   * the recovery path's every call.
   */
  lookup<T>(call: FailoverCall, key: string): Promise<FailoverEntry<T> | undefined> {
    const { meta, store, runtime } = call;
    const { writer, guard, metrics } = this.parts;
    const pending = writer.pendingEntry(store, meta.effectiveName, key);
    if (pending === null) return Promise.resolve(undefined);
    if (pending) return Promise.resolve(this.unexpired(call, key, { ...(pending as FailoverEntry<T>) }));
    return guarded(guard, metrics, 'find', () =>
      store.find<T>(meta.effectiveName, key, runtime.entryType),
    ).then(
      (entry) => (entry === undefined ? undefined : this.unexpired(call, key, entry)),
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
    call: FailoverCall,
    key: string,
    entry: FailoverEntry<T>,
    monotonic?: number,
  ): FailoverEntry<T> | undefined | Promise<undefined> {
    const { meta, store } = call;
    if (storeClock(store, monotonic) <= entry.expireOn.getTime()) return entry;
    const write = this.parts.writer.delete(store, meta.name, meta.effectiveName, key);
    if (!write) return undefined;
    return guarded(this.parts.guard, this.parts.metrics, 'delete', async () => {
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
    call: FailoverCall,
    key: string,
    monotonic?: number,
  ): FailoverEntry<T> | undefined | Promise<undefined> | typeof NOT_NOW {
    const { meta, store } = call;
    const guard = this.parts.guard;
    if (!canFindNow(store) || !guard.closed) return NOT_NOW;
    if (this.parts.writer.pendingEntry(store, meta.effectiveName, key) !== undefined) return NOT_NOW;
    let entry: FailoverEntry<T> | undefined | typeof NOT_NOW;
    try {
      entry = store.findNow<T>(meta.effectiveName, key, call.runtime.entryType);
    } catch (storeError) {
      guard.failedNow(storeError);
      this.recoveryFailed(meta, storeError);
      return undefined;
    }
    if (entry !== NOT_NOW) guard.succeededNow();
    if (entry === NOT_NOW || entry === undefined) return entry;
    return this.unexpired(call, key, entry, monotonic);
  }

  recoveryFailed(meta: FailoverMetadata, storeError: unknown): void {
    this.parts.metrics.storeError('find');
    logger.warn(`Failover '${meta.name}': recovery failed: ${(storeError as Error)?.message ?? storeError}`);
  }
}
