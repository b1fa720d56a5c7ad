import { isBrokenCircuitError } from 'cockatiel';
import type { FailoverMetadata } from '../decorators/failover-options';
import { markRecovered } from '../payload/referential';
import { DatabaseClock } from '../store/database-clock';
import { NOT_NOW, type FailoverEntry } from '../store/failover-store';
import { StoreTimeoutError } from '../errors';
import { Injectable, Logger, Optional } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { settle, type FailoverCall } from './failover-call';
import { FailoverLookup } from './failover-lookup';
import { FailoverParts } from './failover-parts';
import { guarded, storeClock } from './guarded-store';
import type { RecoveredPayloadHandler } from './recovered-payload.handler';
import { TIMED_OUT, scatter } from './scatter';

const logger = new Logger('FailoverExecutor');

/**
 * Answers a failed upstream call: the stored entry (or every stored slice, gathered and merged),
 * else the module's RecoveredPayloadHandler, else null or the upstream's error.
 */
@Injectable()
export class FailoverRecovery {
  private handler?: RecoveredPayloadHandler;

  constructor(
    private readonly parts: FailoverParts,
    private readonly lookups: FailoverLookup,
    @Optional() private readonly moduleRef?: ModuleRef,
  ) {}

  /** The answer to `call`, whose upstream failed with `error`. */
  recover<T>(call: FailoverCall, error: unknown): T | null | Promise<T | null> {
    const { meta, runtime, store } = call;
    const { metrics, runtimes, guard, writer } = this.parts;
    // One clock reading for the whole recovery: the failure's time and the expiry check.
    const mono = DatabaseClock.monotonic();
    metrics.upstreamFailed(meta.name, error, mono);
    // An open circuit never called the upstream: always answer from the store if we can.
    if (meta.recoverOn && !isBrokenCircuitError(error) && !runtimes.recoverOn(meta, error)) {
      settle(metrics, call, 'not-recoverable');
      return Promise.reject(error);
    }
    const key = runtimes.key(runtime, call.rawKey);
    if (runtime.splitter)
      return this.gather<T>(call, error)
        .then(undefined, (gatherError: unknown) => {
          // A slice key or a store failure: reported, and the caller gets the upstream's answer.
          this.lookups.recoveryFailed(meta, gatherError);
          return undefined;
        })
        .then((recovered) => this.answer(call, key, error, recovered));
    const now = this.lookups.lookupNow<T>(call, key, mono);
    if (now !== NOT_NOW && !(now instanceof Promise))
      return this.answer(call, key, error, now && markRecovered(now.payload, now.asOf, error));
    if (now === NOT_NOW && guard.closed && writer.pendingEntry(store, meta.effectiveName, key) === undefined)
      return this.recoverFromRead(call, key, error);
    return (now === NOT_NOW ? this.lookups.lookup<T>(call, key) : now).then((e) =>
      this.answer(call, key, error, e && markRecovered(e.payload, e.asOf, error)),
    );
  }

  /**
   * The common asynchronous recovery (a server database, the store answering, nothing pending):
   * `lookup`, the store guard and the answer settled in one continuation of the bounded read,
   * since every promise hop shows on a read that takes tens of microseconds.
   */
  private recoverFromRead<T>(call: FailoverCall, key: string, error: unknown): Promise<T | null> {
    const { meta, store } = call;
    const { guard, metrics } = this.parts;
    let read: Promise<FailoverEntry<T> | undefined>;
    try {
      read = store.find<T>(meta.effectiveName, key, call.runtime.entryType);
    } catch (storeError) {
      read = Promise.reject(storeError);
    }
    return guard.bounded('find', read).then(
      (entry) => {
        guard.succeededNow();
        const live = entry && this.lookups.unexpired(call, key, entry);
        if (live instanceof Promise) return live.then(() => this.answer<T>(call, key, error, undefined));
        return this.answer(call, key, error, live && markRecovered(live.payload, live.asOf, error));
      },
      (storeError: unknown) => {
        guard.failedNow(storeError);
        if (storeError instanceof StoreTimeoutError) metrics.storeError('find-timeout');
        else this.lookups.recoveryFailed(meta, storeError);
        return this.answer<T>(call, key, error, undefined);
      },
    );
  }

  /** The recovered value, or what the failover answers when nothing was stored under `key`. */
  private answer<T>(
    call: FailoverCall,
    key: string,
    error: unknown,
    recovered: T | undefined,
  ): T | null | Promise<T | null> {
    if (recovered === undefined) return this.notRecovered<T>(call, key, error);
    settle(this.parts.metrics, call, 'recovered');
    return recovered;
  }

  /** Nothing stored: the failover's handler, else null or the upstream's error. */
  private async notRecovered<T>(call: FailoverCall, key: string, error: unknown): Promise<T | null> {
    const { meta, rawKey } = call;
    const { metrics, options } = this.parts;
    const handled = await this.fromHandler(meta, { rawKey, key, args: call.upstream.args, error });
    if (handled !== undefined) {
      settle(metrics, call, 'handler');
      return handled as T;
    }
    settle(metrics, call, 'failed');
    if (options.exceptionPolicy === 'never-throw') return null;
    throw error;
  }

  /** Scatter/gather recovery: every slice looked up, merged with `null` for missing ones. */
  private async gather<T>(call: FailoverCall, error: unknown): Promise<T | undefined> {
    const { meta, runtime, store } = call;
    const { args } = call.upstream;
    const { guard, metrics, runtimes, options } = this.parts;
    const splitter = runtime.splitter!;
    let payloads: Array<unknown | null>;
    if (meta.recoverAll || args.length === 0) {
      if (!store.findAll) return undefined;
      try {
        const now = storeClock(store);
        const all = await guarded(guard, metrics, 'findAll', () =>
          store.findAll!(meta.effectiveName, runtime.entryType),
        );
        if (!all) return undefined;
        const entries = all.filter((e) => now <= e.expireOn.getTime());
        payloads = entries.map((e) => markRecovered(e.payload, e.asOf, error));
      } catch (storeError) {
        metrics.storeError('findAll');
        logger.warn(
          `Failover '${meta.name}': recoverAll failed: ${(storeError as Error)?.message ?? storeError}`,
        );
        return undefined;
      }
    } else {
      let sliceArgs: unknown[][];
      try {
        sliceArgs = splitter.splitOnRecover(args);
      } catch (splitError) {
        runtimes.splitterFailed(runtime, 'splitOnRecover', splitError);
        return undefined;
      }
      const lookups = sliceArgs.map((a) => async () => {
        const entry = await this.lookups.lookup(call, runtimes.key(runtime, runtimes.rawKey(runtime, a)));
        return entry ? markRecovered(entry.payload, entry.asOf, error) : null;
      });
      const results = await scatter(options.scatter, lookups, (i) =>
        logger.warn(`Failover '${meta.name}': recovering slice ${i} timed out`),
      );
      payloads = results.map((r) => (r === TIMED_OUT ? null : r));
      const missing = payloads.filter((p) => p === null).length;
      if (missing === payloads.length) return undefined;
      if (missing)
        logger.warn(
          `Failover '${meta.name}': partial recovery, ${missing} of ${payloads.length} slices missing`,
        );
    }
    if (payloads.length === 0) return undefined;
    try {
      return splitter.merge(args, payloads) as T;
    } catch (mergeError) {
      runtimes.splitterFailed(runtime, 'merge', mergeError);
      return undefined;
    }
  }

  private async fromHandler(
    meta: FailoverMetadata,
    ctx: { rawKey: string; key: string; args: unknown[]; error: unknown },
  ): Promise<unknown> {
    const { options } = this.parts;
    const moduleRef = this.moduleRef;
    const handlerClass = options.recoveredPayloadHandler;
    if (!handlerClass) return undefined;
    try {
      this.handler ??= moduleRef
        ? await moduleRef.create(handlerClass)
        : new (handlerClass as new () => RecoveredPayloadHandler)();
      return await this.handler!.recover({ name: meta.name, effectiveName: meta.effectiveName, ...ctx });
    } catch (handlerError) {
      logger.warn(
        `Failover '${meta.name}': RecoveredPayloadHandler threw: ${(handlerError as Error)?.message}`,
      );
      return undefined;
    }
  }
}
