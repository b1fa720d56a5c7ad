import { LRUCache } from 'lru-cache';
import type {
  CleanupBatchOptions,
  FailoverEntry,
  FailoverStore,
  SynchronousFind,
  SynchronousStore,
} from './failover-store';

/** Shallow copy keeping the prototype, so marking a recovered value never touches the cache. */
function copy<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => copy(v)) as T;
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return Object.assign(Object.create(Object.getPrototypeOf(value)), value);
  }
  return value;
}

/** In-process, bounded (least recently used entries go first), not durable. The default store. */
export class MemoryFailoverStore implements FailoverStore, SynchronousFind, SynchronousStore {
  readonly description = 'memory';
  private readonly entries: LRUCache<string, FailoverEntry<unknown>>;

  constructor(maxEntries = 10_000) {
    this.entries = new LRUCache({ max: maxEntries });
  }

  private id(name: string, key: string): string {
    return `${name}\u0000${key}`;
  }

  async store<T>(entry: FailoverEntry<T>): Promise<void> {
    this.storeNow(entry);
  }

  /** The same write, synchronously (the executor's success path skips a promise hop with it). */
  storeNow<T>(entry: FailoverEntry<T>): void {
    this.entries.set(this.id(entry.name, entry.key), { ...entry, payload: copy(entry.payload) });
  }

  async find<T>(name: string, key: string): Promise<FailoverEntry<T> | undefined> {
    return this.findNow<T>(name, key);
  }

  /** The same read, synchronously (the executor's recovery path skips a promise hop with it). */
  findNow<T>(name: string, key: string): FailoverEntry<T> | undefined {
    const entry = this.entries.get(this.id(name, key)) as FailoverEntry<T> | undefined;
    return entry && { ...entry, payload: copy(entry.payload) };
  }

  async findAll<T>(name: string): Promise<FailoverEntry<T>[]> {
    const found: FailoverEntry<T>[] = [];
    for (const entry of this.entries.values()) {
      if (entry.name === name)
        found.push({ ...(entry as FailoverEntry<T>), payload: copy(entry.payload as T) });
    }
    return found;
  }

  async countLive(name: string, now: Date): Promise<number> {
    let count = 0;
    for (const entry of this.entries.values())
      if (entry.name === name && entry.expireOn.getTime() >= now.getTime()) count++;
    return count;
  }

  async delete(name: string, key: string): Promise<void> {
    this.entries.delete(this.id(name, key));
  }

  async cleanByExpiry(expiry: Date, options: CleanupBatchOptions = {}): Promise<number> {
    let removed = 0;
    for (const [id, entry] of this.entries.entries()) {
      if (entry.expireOn.getTime() < expiry.getTime()) {
        this.entries.delete(id);
        removed++;
      }
    }
    options.onBatch?.(removed);
    return removed;
  }

  get size(): number {
    return this.entries.size;
  }
}
