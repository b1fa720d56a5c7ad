import { BeforeApplicationShutdown, Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { findSchedulerRegistry, HoldfastTimers } from '@holdfast/core/kit';
import { ModuleRef } from '@nestjs/core';
import { FAILOVER_RESOLVED_OPTIONS, FAILOVER_STORE_NAME } from '../failover.tokens';
import { failoverJobName } from '../failover.tokens';
import { FailoverMetrics } from '../metrics/failover.metrics';
import type { ResolvedFailoverOptions } from '../failover.options';
import type { PayloadType } from '../payload/payload-type';
import {
  NOT_NOW,
  canStoreNow,
  type FailoverEntry,
  type FailoverStore,
  type StoreManyItem,
} from '../store/failover-store';

interface PendingWrite {
  store: FailoverStore;
  op: 'store' | 'delete';
  name: string;
  key: string;
  entry?: FailoverEntry<unknown>;
  type?: PayloadType;
  failover: string;
}

/**
 * Store writes and deletes, off the caller's path by default: a bounded queue in which pending
 * writes to the same key coalesce (the latest wins), drained by one flusher every
 * `flushInterval` (or as soon as `maxBatch` rows wait) as multi-row upserts. A full queue and a
 * failed flush are logged and counted, never thrown to the caller. Shutdown drains the queue,
 * so a graceful stop loses nothing. With `async: false` each write is awaited by the caller
 * (its failure still stays out of the caller's way).
 */

@Injectable()
export class FailoverWriter implements BeforeApplicationShutdown {
  private readonly logger = new Logger(FailoverWriter.name);
  private readonly queue = new Map<string, PendingWrite>();
  private readonly flushingNow = new Map<string, PendingWrite>();
  private readonly storeIds = new WeakMap<FailoverStore, number>();
  private readonly callerWrites = new Set<Promise<boolean>>();
  private nextStoreId = 0;
  /**
   * The write-behind flush, `holdfast:failover:write-behind` in the app's SchedulerRegistry
   * (`holdfast:failover:<name>:write-behind` for a named FailoverModule).
   */
  private readonly timers: HoldfastTimers;
  private readonly flushTimer: string;
  private flushing?: Promise<void>;
  private closed = false;

  constructor(
    @Inject(FAILOVER_RESOLVED_OPTIONS) private readonly options: ResolvedFailoverOptions,
    private readonly metrics: FailoverMetrics,
    moduleRef: ModuleRef,
    @Optional() @Inject(FAILOVER_STORE_NAME) storeName?: string,
  ) {
    this.timers = new HoldfastTimers(() => findSchedulerRegistry(moduleRef));
    this.flushTimer = failoverJobName('write-behind', storeName);
  }

  store(
    store: FailoverStore,
    failover: string,
    entry: FailoverEntry<unknown>,
    type?: PayloadType,
  ): Promise<boolean> | undefined {
    return this.submit({ store, op: 'store', name: entry.name, key: entry.key, entry, type, failover });
  }

  /**
   * With `async: false`, the write done at once when the store can (SQLite with its connection
   * free, the memory store): true when stored, false when it failed (logged, counted). NOT_NOW
   * when it cannot right now, or with write-behind: use `store`.
   */
  storeNow(
    store: FailoverStore,
    failover: string,
    entry: FailoverEntry<unknown>,
    type?: PayloadType,
  ): boolean | typeof NOT_NOW {
    if (this.options.async || !canStoreNow(store)) return NOT_NOW;
    try {
      if (store.storeNow(entry, type) === NOT_NOW) return NOT_NOW;
    } catch (error) {
      this.failed('store', 1, failover, error);
      return false;
    }
    this.metrics.written(1, 1);
    return true;
  }

  /** A promise only when the caller must wait (no write-behind): false when the write failed (logged, counted). */
  delete(store: FailoverStore, failover: string, name: string, key: string): Promise<boolean> | undefined {
    return this.submit({ store, op: 'delete', name, key, failover });
  }

  /**
   * A write not yet in the store: the entry, `null` for a pending delete, undefined when nothing
   * is pending. Recovery reads it first, so a caller sees its own latest value.
   */
  pendingEntry(store: FailoverStore, name: string, key: string): FailoverEntry<unknown> | null | undefined {
    if (this.queue.size === 0 && this.flushingNow.size === 0) return undefined;
    const id = this.id(store, name, key);
    const pending = this.queue.get(id) ?? this.flushingNow.get(id);
    if (!pending) return undefined;
    return pending.op === 'delete' ? null : pending.entry;
  }

  /** Writes waiting in the queue or being flushed. */
  get pending(): number {
    return this.queue.size + this.flushingNow.size + this.callerWrites.size;
  }

  /** Resolves when every write submitted so far is in the store (or counted as failed). */
  async flush(): Promise<void> {
    while (this.queue.size || this.flushing || this.callerWrites.size) {
      if (this.callerWrites.size) await Promise.all([...this.callerWrites]);
      if (this.queue.size && !this.flushing) this.startFlush();
      if (this.flushing) await this.flushing;
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.closed = true;
    this.timers.clearAll();
    await this.flush();
  }

  private id(store: FailoverStore, name: string, key: string): string {
    let storeId = this.storeIds.get(store);
    if (storeId === undefined) this.storeIds.set(store, (storeId = this.nextStoreId++));
    return `${storeId}\u0000${name}\u0000${key}`;
  }

  private submit(write: PendingWrite): Promise<boolean> | undefined {
    const async = this.options.async;
    if (!async) return this.writeNow([write]);
    const id = this.id(write.store, write.name, write.key);
    if (this.queue.delete(id)) {
      this.metrics.coalesced();
    } else if (this.queue.size >= async.maxQueue) {
      if (async.rejection === 'drop-new') {
        this.dropped(1);
        return undefined;
      }
      if (async.rejection === 'caller-runs') {
        const run = this.writeNow([write]);
        this.callerWrites.add(run);
        void run.finally(() => this.callerWrites.delete(run));
        return run;
      }
      const oldest = this.queue.keys().next().value as string;
      this.queue.delete(oldest);
      this.dropped(1);
    }
    this.queue.set(id, write);
    if (this.queue.size >= async.maxBatch) this.startFlush();
    else this.schedule(async.flushInterval);
    return undefined;
  }

  private dropped(count: number): void {
    const before = this.metrics.droppedWrites;
    for (let i = 0; i < count; i++) this.metrics.dropped();
    if (Math.floor(before / 1000) !== Math.floor(this.metrics.droppedWrites / 1000) || before === 0) {
      this.logger.warn(
        `Failover write-behind queue is full: ${this.metrics.droppedWrites} writes dropped so far`,
      );
    }
  }

  private schedule(delay: number): void {
    if (this.timers.has(this.flushTimer) || this.closed) return;
    this.timers.set(this.flushTimer, delay, () => this.startFlush());
  }

  private startFlush(): void {
    if (this.flushing || !this.queue.size) return;
    this.flushing = this.drain().finally(() => {
      this.flushing = undefined;
      const async = this.options.async;
      if (this.queue.size && async) {
        if (this.queue.size >= async.maxBatch || this.closed) this.startFlush();
        else this.schedule(async.flushInterval);
      }
    });
  }

  /** Sends up to maxBatch pending writes; one flush at a time keeps per-key order. */
  private async drain(): Promise<void> {
    const async = this.options.async;
    const max = async ? async.maxBatch : Infinity;
    const batch: PendingWrite[] = [];
    for (const [id, write] of this.queue) {
      if (batch.length >= max) break;
      this.queue.delete(id);
      this.flushingNow.set(id, write);
      batch.push(write);
    }
    try {
      await this.writeNow(batch);
    } finally {
      for (const write of batch) this.flushingNow.delete(this.id(write.store, write.name, write.key));
    }
  }

  /** Writes a batch: one storeMany per store where the store has it; failures logged and counted. */
  /** true when every write reached the store. */
  private async writeNow(batch: PendingWrite[]): Promise<boolean> {
    if (batch.length === 1) {
      // The synchronous path (async: false): one write, no grouping.
      const [w] = batch;
      if (w.op === 'delete') return this.guard('delete', batch, () => w.store.delete(w.name, w.key));
      return this.guard('store', batch, async () => {
        await w.store.store(w.entry!, w.type);
        this.metrics.written(1, 1);
      });
    }
    const byStore = new Map<FailoverStore, PendingWrite[]>();
    for (const write of batch) byStore.set(write.store, [...(byStore.get(write.store) ?? []), write]);
    let ok = true;
    await Promise.all(
      [...byStore].map(async ([store, writes]) => {
        const stores = writes.filter((w) => w.op === 'store');
        const deletes = writes.filter((w) => w.op === 'delete');
        if (stores.length) {
          ok =
            (await this.guard('store', stores, async () => {
              if (store.storeMany && stores.length > 1) {
                await store.storeMany(
                  stores.map((w) => ({ entry: w.entry!, type: w.type }) satisfies StoreManyItem),
                );
                this.metrics.written(stores.length, 1);
              } else {
                for (const w of stores) await store.store(w.entry!, w.type);
                this.metrics.written(stores.length, stores.length);
              }
            })) && ok;
        }
        for (const w of deletes)
          ok = (await this.guard('delete', [w], () => store.delete(w.name, w.key))) && ok;
      }),
    );
    return ok;
  }

  private async guard(
    operation: string,
    writes: PendingWrite[],
    work: () => Promise<void>,
  ): Promise<boolean> {
    try {
      await work();
      return true;
    } catch (error) {
      this.failed(operation, writes.length, [...new Set(writes.map((w) => w.failover))].join(', '), error);
      return false;
    }
  }

  private failed(operation: string, count: number, names: string, error: unknown): void {
    this.metrics.storeError(operation, count);
    this.logger.warn(
      `Failover ${operation} of ${count} entr${count === 1 ? 'y' : 'ies'} (${names}) failed: ${(error as Error)?.message ?? error}`,
    );
  }
}
