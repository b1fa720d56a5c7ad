import type { PayloadType } from '../payload/payload-type';

/** One stored value: `name` is the effective name (domain or name), `key` the UUID key. */
export interface FailoverEntry<T = unknown> {
  name: string;
  key: string;
  asOf: Date;
  expireOn: Date;
  payload: T;
}

export interface CleanupBatchOptions {
  /** Most rows per DELETE statement. Default: 1,000 on MySQL/MariaDB, else 5,000). */
  batchSize?: number;
  /** Milliseconds between statements (default 0: one turn of the event loop). */
  pause?: number;
  /** Called after each statement with the rows it removed. */
  onBatch?: (rows: number) => void;
}

export interface StoreManyItem {
  entry: FailoverEntry<unknown>;
  type?: PayloadType;
}

/**
 * Where last good values live. Implement it and pass `store: { type: 'custom', useClass }` to
 * keep them elsewhere.
 */
export interface FailoverStore {
  store<T>(entry: FailoverEntry<T>, type?: PayloadType): Promise<void>;
  /** Optional: many entries at once (one multi-row upsert); keys are distinct. */
  storeMany?(items: readonly StoreManyItem[]): Promise<void>;
  /** Optional: every entry of a failover (scatter/gather `recoverAll`). */
  findAll?<T>(name: string, type?: PayloadType): Promise<FailoverEntry<T>[]>;
  /** Optional: unexpired entries of a failover at `now`. */
  countLive?(name: string, now: Date): Promise<number>;
  /** The entry, expired or not (the caller decides), or undefined. */
  find<T>(name: string, key: string, type?: PayloadType): Promise<FailoverEntry<T> | undefined>;
  delete(name: string, key: string): Promise<void>;
  /**
   * Deletes entries with EXPIRE_ON strictly before `expiry`; returns how many. SQL stores
   * delete in statements of at most `batchSize` rows, each its own transaction.
   */
  cleanByExpiry(expiry: Date, options?: CleanupBatchOptions): Promise<number>;
  /**
   * Optional: claims this cleanup tick for the cluster (a lease held `leaseMs` on the store's
   * clock); false when another instance holds it. Stores without it clean on every instance.
   */
  claimCleanup?(leaseMs: number, owner: string): Promise<boolean>;
  /** The clock that cleanup compares against (the database clock for SQL stores). */
  now?(): Promise<Date>;
  /**
   * The same clock in epoch ms without a round trip, for AS_OF, EXPIRE_ON and the expiry check
   * on every call (SQL stores: the database clock, kept by DatabaseClock). Default: the process clock.
   * `monotonic`: a `performance.now()` reading the caller took a moment ago, for a store whose
   * clock follows the monotonic clock to use instead of reading it again (others ignore it).
   */
  clock?(monotonic?: number): number;
  /** Throws when the store cannot be reached (health checks). */
  ping?(): Promise<void>;
  /** A name for logs and health output. */
  readonly description?: string;
}

/** `findNow`'s answer when the store cannot read synchronously at this moment. */
export const NOT_NOW: unique symbol = Symbol('not-now');

/**
 * A store that can sometimes answer a read synchronously (SQLite with its connection free, the
 * memory store). Internal: the executor's recovery path uses it to skip promise hops.
 */
export interface SynchronousFind {
  findNow<T>(name: string, key: string, type?: PayloadType): FailoverEntry<T> | undefined | typeof NOT_NOW;
}

export function canFindNow(store: FailoverStore): store is FailoverStore & SynchronousFind {
  return typeof (store as Partial<SynchronousFind>).findNow === 'function';
}

/**
 * A store that can sometimes write synchronously (SQLite with its connection free, the memory
 * store). Internal: the executor's success path with `async: false` uses it to skip promise hops.
 */
export interface SynchronousStore {
  /**
   * Stores the entry at once, or answers NOT_NOW (nothing written) when it cannot right now;
   * the caller then uses `store`. Throws what `store` would reject with.
   */
  storeNow<T>(entry: FailoverEntry<T>, type?: PayloadType): void | typeof NOT_NOW;
}

export function canStoreNow(store: FailoverStore): store is FailoverStore & SynchronousStore {
  return typeof (store as Partial<SynchronousStore>).storeNow === 'function';
}
