import type { Logger } from '@nestjs/common';
import type { ModuleRef } from '@nestjs/core';
import { isBrokenCircuitError } from 'cockatiel';
import type { FailoverMetadata } from '../decorator/failover-options';
import type { FailoverMetrics } from '../health/failover.metrics';
import type { ResolvedFailoverModuleOptions } from '../options/failover-module.options';
import type { PayloadType } from '../payload/payload-type';
import { markRecovered } from '../payload/referential';
import { DatabaseClock } from '../store/database-clock';
import { NOT_NOW, type FailoverEntry, type FailoverStore } from '../store/failover-store';
import { StoreTimeoutError, type StoreGuard } from '../store/store-guard';
import type { FailoverLookup } from './failover-lookup';
import type { FailoverRuntimes, Runtime } from './failover-runtimes';
import type { FailoverWriter } from './failover-writer';
import { guarded, storeClock } from './guarded-store';
import type { RecoveredPayloadHandler } from './recovered-payload.handler';
import { TIMED_OUT, scatter } from './scatter';

/**
 * Answers a failed upstream call: the stored entry (or every stored slice, gathered and merged),
 * else the module's RecoveredPayloadHandler, else null or the upstream's error.
 */
export class FailoverRecovery {
  private handler?: RecoveredPayloadHandler;

  constructor(
    private readonly options: ResolvedFailoverModuleOptions,
    private readonly runtimes: FailoverRuntimes,
    private readonly lookups: FailoverLookup,
    private readonly guard: StoreGuard,
    private readonly writer: FailoverWriter,
    private readonly metrics: FailoverMetrics,
    private readonly logger: Logger,
    private readonly moduleRef?: ModuleRef,
  ) {}

  recover<T>(
    meta: FailoverMetadata,
    runtime: Runtime,
    store: FailoverStore,
    args: unknown[],
    rawKey: string,
    error: unknown,
  ): T | null | Promise<T | null> {
    // One clock reading for the whole recovery: the failure's time and the expiry check.
    const mono = DatabaseClock.monotonic();
    this.metrics.upstreamFailed(meta.name, error, mono);
    // An open circuit never called the upstream: always answer from the store if we can.
    if (meta.recoverOn && !isBrokenCircuitError(error) && !this.runtimes.recoverOn(meta, error)) {
      this.metrics.call(meta.name, 'not-recoverable');
      return Promise.reject(error);
    }
    const key = this.runtimes.key(meta, runtime, rawKey);
    if (runtime.splitter)
      return this.gather<T>(meta, runtime, store, args, error)
        .then(undefined, (gatherError: unknown) => {
          // A slice key or a store failure: reported, and the caller gets the upstream's answer.
          this.lookups.recoveryFailed(meta, gatherError);
          return undefined;
        })
        .then((recovered) => this.answer(meta, rawKey, key, args, error, recovered));
    const now = this.lookups.lookupNow<T>(meta, store, key, runtime.entryType, mono);
    if (now !== NOT_NOW && !(now instanceof Promise))
      return this.answer(meta, rawKey, key, args, error, now && markRecovered(now.payload, now.asOf, error));
    if (
      now === NOT_NOW &&
      this.guard.closed &&
      this.writer.pendingEntry(store, meta.effectiveName, key) === undefined
    )
      return this.recoverFromRead(meta, store, rawKey, key, args, error, runtime.entryType);
    return (now === NOT_NOW ? this.lookups.lookup<T>(meta, store, key, runtime.entryType) : now).then((e) =>
      this.answer(meta, rawKey, key, args, error, e && markRecovered(e.payload, e.asOf, error)),
    );
  }

  /**
   * The common asynchronous recovery (a server database, the store answering, nothing pending):
   * `lookup`, the store guard and the answer settled in one continuation of the bounded read,
   * since every promise hop shows on a read that takes tens of microseconds.
   */
  private recoverFromRead<T>(
    meta: FailoverMetadata,
    store: FailoverStore,
    rawKey: string,
    key: string,
    args: unknown[],
    error: unknown,
    type?: PayloadType,
  ): Promise<T | null> {
    let read: Promise<FailoverEntry<T> | undefined>;
    try {
      read = store.find<T>(meta.effectiveName, key, type);
    } catch (storeError) {
      read = Promise.reject(storeError);
    }
    return this.guard.bounded('find', read).then(
      (entry) => {
        this.guard.succeededNow();
        const live = entry && this.lookups.unexpired(meta, store, key, entry);
        if (live instanceof Promise)
          return live.then(() => this.answer<T>(meta, rawKey, key, args, error, undefined));
        return this.answer(
          meta,
          rawKey,
          key,
          args,
          error,
          live && markRecovered(live.payload, live.asOf, error),
        );
      },
      (storeError: unknown) => {
        this.guard.failedNow(storeError);
        if (storeError instanceof StoreTimeoutError) this.metrics.storeError('find-timeout');
        else this.lookups.recoveryFailed(meta, storeError);
        return this.answer<T>(meta, rawKey, key, args, error, undefined);
      },
    );
  }

  /** The recovered value, or what the failover answers when nothing was stored. */
  private answer<T>(
    meta: FailoverMetadata,
    rawKey: string,
    key: string,
    args: unknown[],
    error: unknown,
    recovered: T | undefined,
  ): T | null | Promise<T | null> {
    if (recovered === undefined) return this.notRecovered<T>(meta, rawKey, key, args, error);
    this.metrics.call(meta.name, 'recovered');
    return recovered;
  }

  /** Nothing stored: the failover's handler, else null or the upstream's error. */
  private async notRecovered<T>(
    meta: FailoverMetadata,
    rawKey: string,
    key: string,
    args: unknown[],
    error: unknown,
  ): Promise<T | null> {
    const handled = await this.fromHandler(meta, { rawKey, key, args, error });
    if (handled !== undefined) {
      this.metrics.call(meta.name, 'handler');
      return handled as T;
    }
    this.metrics.call(meta.name, 'failed');
    if (this.options.exceptionPolicy === 'never-throw') return null;
    throw error;
  }

  /** Scatter/gather recovery: every slice looked up, merged with `null` for missing ones. */
  private async gather<T>(
    meta: FailoverMetadata,
    runtime: Runtime,
    store: FailoverStore,
    args: unknown[],
    error: unknown,
  ): Promise<T | undefined> {
    const splitter = runtime.splitter!;
    let payloads: Array<unknown | null>;
    if (meta.recoverAll || args.length === 0) {
      if (!store.findAll) return undefined;
      try {
        const now = storeClock(store);
        const all = await guarded(this.guard, this.metrics, 'findAll', () =>
          store.findAll!(meta.effectiveName, runtime.entryType),
        );
        if (!all) return undefined;
        const entries = all.filter((e) => now <= e.expireOn.getTime());
        payloads = entries.map((e) => markRecovered(e.payload, e.asOf, error));
      } catch (storeError) {
        this.metrics.storeError('findAll');
        this.logger.warn(
          `Failover '${meta.name}': recoverAll failed: ${(storeError as Error)?.message ?? storeError}`,
        );
        return undefined;
      }
    } else {
      let sliceArgs: unknown[][];
      try {
        sliceArgs = splitter.splitOnRecover(args);
      } catch (splitError) {
        this.runtimes.splitterFailed(meta, runtime, 'splitOnRecover', splitError);
        return undefined;
      }
      const lookups = sliceArgs.map((a) => async () => {
        const entry = await this.lookups.lookup(
          meta,
          store,
          this.runtimes.key(meta, runtime, this.runtimes.rawKey(runtime, a)),
          runtime.entryType,
        );
        return entry ? markRecovered(entry.payload, entry.asOf, error) : null;
      });
      const results = await scatter(this.options.scatter, lookups, (i) =>
        this.logger.warn(`Failover '${meta.name}': recovering slice ${i} timed out`),
      );
      payloads = results.map((r) => (r === TIMED_OUT ? null : r));
      const missing = payloads.filter((p) => p === null).length;
      if (missing === payloads.length) return undefined;
      if (missing)
        this.logger.warn(
          `Failover '${meta.name}': partial recovery, ${missing} of ${payloads.length} slices missing`,
        );
    }
    if (payloads.length === 0) return undefined;
    try {
      return splitter.merge(args, payloads) as T;
    } catch (mergeError) {
      this.runtimes.splitterFailed(meta, runtime, 'merge', mergeError);
      return undefined;
    }
  }

  private async fromHandler(
    meta: FailoverMetadata,
    ctx: { rawKey: string; key: string; args: unknown[]; error: unknown },
  ): Promise<unknown> {
    const handlerClass = this.options.recoveredPayloadHandler;
    if (!handlerClass) return undefined;
    try {
      this.handler ??= this.moduleRef
        ? await this.moduleRef.create(handlerClass)
        : new (handlerClass as any)();
      return await this.handler!.recover({ name: meta.name, effectiveName: meta.effectiveName, ...ctx });
    } catch (handlerError) {
      this.logger.warn(
        `Failover '${meta.name}': RecoveredPayloadHandler threw: ${(handlerError as Error)?.message}`,
      );
      return undefined;
    }
  }
}
