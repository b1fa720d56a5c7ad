import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import {
  ConsecutiveBreaker,
  circuitBreaker,
  handleWhen,
  isBrokenCircuitError,
  type CircuitBreakerPolicy,
} from 'cockatiel';
import { HoldfastError, parseDuration, withTimeout } from '@holdfast/core';
import type { FailoverMetadata } from '../decorator/failover-options';
import { PayloadSplitterError, UnknownPayloadClassError } from '../errors';
import { FAILOVER_RESOLVED_OPTIONS } from '../failover.constants';
import { FailoverMetrics } from '../health/failover.metrics';
import { failoverKey } from '../key/failover-key';
import { moduleKeyGenerator, type FailoverKeyContext, type KeyGenerator } from '../key/key-generator';
import type { ResolvedFailoverModuleOptions } from '../options/failover-module.options';
import type { Class, PayloadType } from '../payload/payload-type';
import { PayloadCodec } from '../payload/payload-codec';
import { markRecovered } from '../payload/referential';
import type { PayloadSplitter } from '../scatter/payload-splitter';
import { NOT_NOW, canFindNow, type FailoverEntry, type FailoverStore } from '../store/failover-store';
import { StoreGuard, StoreTimeoutError, isStoreSkipped } from '../store/store-guard';
import { FailoverStores } from '../tenant/failover-stores';
import { FailoverRegistry } from './failover.registry';
import { FailoverWriter } from './failover-writer';
import { RecoveredPayloadHandler } from './recovered-payload.handler';

/** A write the writer already reported: counted by the store breaker, not seen by the caller. */
class StoreWriteFailed extends Error {}
const TIMED_OUT: unique symbol = Symbol('timed-out');

/** Per-failover pieces built on first use. */
interface Runtime {
  keyGenerator: KeyGenerator;
  context: FailoverKeyContext;
  splitterName: string;
  /** rawKey -> UUID, so a hot key does not pay an MD5 per call (bounded). */
  keys: Map<string, string>;
  splitter?: PayloadSplitter;
  breaker?: CircuitBreakerPolicy;
  /** The type of one stored entry: the element type when a splitter stores slices. */
  entryType?: PayloadType;
}

/**
 * Runs a @Failover method: calls the upstream (through a circuit breaker when configured),
 * keeps each good value (or each slice of it), and answers from the store when the upstream
 * fails. Reached from the decorated method by property injection.
 */
@Injectable()
export class FailoverExecutor {
  private readonly logger = new Logger(FailoverExecutor.name);
  private readonly runtimes = new WeakMap<FailoverMetadata, Runtime>();
  private handler?: RecoveredPayloadHandler;
  /** Bounds every store wait of a caller, and skips the store while it is unreachable. */
  private readonly storeGuard: StoreGuard;
  /** `failover\0class` pairs already reported as unknown payload classes (reported once). */
  private readonly refused = new Set<string>();

  constructor(
    @Inject(FAILOVER_RESOLVED_OPTIONS) private readonly options: ResolvedFailoverModuleOptions,
    private readonly stores: FailoverStores,
    private readonly writer: FailoverWriter,
    private readonly metrics: FailoverMetrics,
    private readonly registry: FailoverRegistry,
    private readonly codec: PayloadCodec,
    @Optional() private readonly moduleRef?: ModuleRef,
  ) {
    this.storeGuard = new StoreGuard(options.storeTimeout);
    this.storeGuard.onChange((open) =>
      open
        ? this.logger.warn(
            `Failover store unreachable (${options.storeTimeout} ms storeTimeout passed 3 times in a row, or it failed): ` +
              'calls skip it until it answers again',
          )
        : this.logger.log('Failover store answers again'),
    );
  }

  /** A caller's wait on the store: bounded, skipped while the store is unreachable; never throws. */
  private guarded<R>(operation: string, work: () => Promise<R>): Promise<R | undefined> {
    return this.storeGuard.run(operation, work).then(undefined, (error: unknown) => {
      if (isStoreSkipped(error)) {
        this.metrics.storeSkipped(operation);
        return undefined;
      }
      if (error instanceof StoreWriteFailed) return undefined;
      if (!(error instanceof StoreTimeoutError)) throw error;
      this.metrics.storeError(`${operation}-timeout`);
      return undefined;
    });
  }

  async execute<T>(
    meta: FailoverMetadata,
    instance: unknown,
    upstream: (...args: any[]) => unknown,
    args: unknown[],
  ): Promise<T | null> {
    const forCall = this.stores.forCall();
    const store = forCall instanceof Promise ? await forCall : forCall;
    const runtime = this.runtime(meta);
    // Before the upstream: an argument that cannot be keyed fails the call the same way up or down.
    const rawKey = this.rawKey(runtime, args);
    let value: T;
    try {
      value = (await (runtime.breaker
        ? runtime.breaker.execute(() => upstream.apply(instance, args))
        : upstream.apply(instance, args))) as T;
    } catch (error) {
      return this.recover<T>(meta, runtime, store, args, rawKey, error);
    }
    if (value !== null && value !== undefined) {
      if (this.storeGuard.open) {
        this.metrics.storeSkipped('store');
      } else {
        const kept = this.keep(meta, runtime, store, args, rawKey, value);
        if (kept)
          await this.guarded('store', async () => {
            // A failed write (already logged and counted) is a failure for the store breaker too.
            if ((await kept) === false) throw new StoreWriteFailed();
          });
      }
    }
    this.metrics.call(meta.name, 'success');
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
  async prepare(meta: FailoverMetadata, moduleRef?: ModuleRef): Promise<void> {
    const ref = moduleRef ?? this.moduleRef;
    const resolve = async <T>(what: Class<T> | T | string | undefined): Promise<T | undefined> => {
      if (what === undefined) return undefined;
      if (typeof what === 'string') return this.moduleRef!.get<T>(what, { strict: false });
      if (typeof what !== 'function') return what;
      const cls = what as Class<T>;
      if (!ref) return new cls();
      try {
        return ref.get<T>(cls, { strict: false });
      } catch {
        return ref.create<T>(cls as never);
      }
    };
    const keyGenerator = await resolve<KeyGenerator>(meta.keyGenerator);
    const splitter = await resolve<PayloadSplitter>(meta.payloadSplitter);
    this.runtimes.set(meta, this.buildRuntime(meta, keyGenerator, splitter));
  }

  private runtime(meta: FailoverMetadata): Runtime {
    let runtime = this.runtimes.get(meta);
    if (runtime) return runtime;
    // Not discovered at bootstrap (a provider Nest did not list): built here, without DI.
    const keyGenerator =
      meta.keyGenerator === undefined
        ? undefined
        : typeof meta.keyGenerator === 'string'
          ? this.moduleRef!.get<KeyGenerator>(meta.keyGenerator, { strict: false })
          : typeof meta.keyGenerator === 'function'
            ? new meta.keyGenerator()
            : meta.keyGenerator;
    const splitter =
      typeof meta.payloadSplitter === 'function' ? new meta.payloadSplitter() : meta.payloadSplitter;
    runtime = this.buildRuntime(meta, keyGenerator, splitter);
    this.runtimes.set(meta, runtime);
    return runtime;
  }

  private buildRuntime(
    meta: FailoverMetadata,
    keyGenerator: KeyGenerator | undefined,
    splitter: PayloadSplitter | undefined,
  ): Runtime {
    const execution = meta.execution ?? this.options.execution;
    const breakerOptions = execution?.circuitBreaker;
    const breaker = breakerOptions
      ? circuitBreaker(
          handleWhen((error) => !meta.recoverOn || this.safeRecoverOn(meta, error)),
          {
            halfOpenAfter: parseDuration(breakerOptions.halfOpenAfter ?? '10s', 'halfOpenAfter'),
            breaker: new ConsecutiveBreaker(breakerOptions.consecutiveFailures ?? 5),
          },
        )
      : undefined;
    const entryType = splitter && Array.isArray(meta.type) ? meta.type[0] : meta.type;
    const context: FailoverKeyContext = {
      name: meta.name,
      domain: meta.domain,
      effectiveName: meta.effectiveName,
      method: meta.method,
    };
    return {
      keyGenerator: keyGenerator ?? moduleKeyGenerator(this.options.keys),
      context,
      keys: new Map(),
      splitter,
      splitterName: splitter?.constructor?.name ?? 'PayloadSplitter',
      breaker,
      entryType,
    };
  }

  /** Layer 1 for this failover; a key error names the failover. */
  private rawKey(runtime: Runtime, args: readonly unknown[]): string {
    return runtime.keyGenerator.key(args, runtime.context);
  }

  private key(meta: FailoverMetadata, runtime: Runtime, rawKey: string): string {
    let key = runtime.keys.get(rawKey);
    if (key === undefined) {
      key = failoverKey(meta.effectiveName, rawKey);
      if (runtime.keys.size >= 1_000) runtime.keys.clear();
      runtime.keys.set(rawKey, key);
    }
    return key;
  }

  /** The store's clock: the database's for SQL stores, so skewed instances agree on what is live. */
  private now(store: FailoverStore): number {
    return store.clock ? store.clock() : Date.now();
  }

  private entry<T>(
    meta: FailoverMetadata,
    runtime: Runtime,
    store: FailoverStore,
    rawKey: string,
    payload: T,
  ): FailoverEntry<T> {
    const asOf = new Date(this.now(store));
    return {
      name: meta.effectiveName,
      key: this.key(meta, runtime, rawKey),
      asOf,
      expireOn: new Date(asOf.getTime() + meta.expiryMs),
      payload,
    };
  }

  /** Stores the value, or each of its slices; never throws. A promise only when the caller must wait. */
  private keep(
    meta: FailoverMetadata,
    runtime: Runtime,
    store: FailoverStore,
    args: unknown[],
    rawKey: string,
    value: unknown,
  ): Promise<boolean | void> | undefined {
    if (!runtime.splitter) {
      if (!this.recoverable(meta, runtime, value)) return undefined;
      return this.writer.store(
        store,
        meta.name,
        this.entry(meta, runtime, store, rawKey, value),
        runtime.entryType,
      );
    }
    return this.keepSlices(meta, runtime, store, args, value);
  }

  private async keepSlices(
    meta: FailoverMetadata,
    runtime: Runtime,
    store: FailoverStore,
    args: unknown[],
    value: unknown,
  ): Promise<void> {
    let slices;
    try {
      slices = runtime.splitter!.splitOnStore(args, value);
    } catch (error) {
      this.splitterFailed(meta, runtime, 'splitOnStore', error);
      return;
    }
    // Partial results: an item the upstream did not return is simply not stored (and counted).
    const writes: Array<() => Promise<boolean> | undefined> = [];
    let missing = 0;
    for (const slice of slices ?? []) {
      if (slice === null || slice === undefined || slice.payload === null || slice.payload === undefined) {
        missing++;
        continue;
      }
      if (!this.recoverable(meta, runtime, slice.payload)) continue;
      let sliceKey: string;
      try {
        sliceKey = this.rawKey(runtime, slice.args);
      } catch (error) {
        this.splitterFailed(meta, runtime, 'splitOnStore', error);
        continue;
      }
      writes.push(() =>
        this.writer.store(
          store,
          meta.name,
          this.entry(meta, runtime, store, sliceKey, slice.payload),
          runtime.entryType,
        ),
      );
    }
    if (missing) this.metrics.slicesMissing(meta.name, missing);
    await this.scatter(writes, (i) =>
      this.logger.warn(`Failover '${meta.name}': storing slice ${i} timed out`),
    );
  }

  /**
   * Whether the value can be rebuilt on recovery; a class instance of an unknown class is
   * refused before it is stored: an error log once per failover and class, a metric each time.
   */
  private recoverable(meta: FailoverMetadata, runtime: Runtime, value: unknown): boolean {
    try {
      this.codec.payloadClass(value, runtime.entryType, meta.name);
      return true;
    } catch (error) {
      if (!(error instanceof UnknownPayloadClassError)) throw error;
      this.metrics.payloadRefused(meta.name, error.payloadClass);
      const id = `${meta.name}\u0000${error.payloadClass}`;
      if (!this.refused.has(id)) {
        this.refused.add(id);
        this.logger.error(error.message);
      }
      return false;
    }
  }

  /** Runs slice operations one by one or, with scatter.parallel, together, each bounded by scatter.timeout. */
  private async scatter<R>(
    operations: Array<() => Promise<R> | R>,
    onTimeout: (index: number) => void,
  ): Promise<Array<R | typeof TIMED_OUT>> {
    const { parallel, timeout } = this.options.scatter;
    const bounded = async (op: () => Promise<R> | R, index: number) => {
      const result = await withTimeout<R, typeof TIMED_OUT>(op, timeout, () => TIMED_OUT);
      if (result === TIMED_OUT) onTimeout(index);
      return result;
    };
    if (parallel) return Promise.all(operations.map(bounded));
    const results: Array<R | typeof TIMED_OUT> = [];
    for (let i = 0; i < operations.length; i++) results.push(await bounded(operations[i], i));
    return results;
  }

  /**
   * One stored entry (pending writes first), or undefined; expired entries are deleted. Written
   * with `then` rather than `async` (like the store guard): it is the recovery path's every call.
   */
  private lookup<T>(
    meta: FailoverMetadata,
    store: FailoverStore,
    key: string,
    type?: PayloadType,
  ): Promise<FailoverEntry<T> | undefined> {
    const pending = this.writer.pendingEntry(store, meta.effectiveName, key);
    if (pending === null) return Promise.resolve(undefined);
    if (pending)
      return Promise.resolve(this.unexpired(meta, store, key, { ...(pending as FailoverEntry<T>) }));
    return this.guarded('find', () => store.find<T>(meta.effectiveName, key, type)).then(
      (entry) => (entry === undefined ? undefined : this.unexpired(meta, store, key, entry)),
      (storeError: unknown) => {
        this.recoveryFailed(meta, storeError);
        return undefined;
      },
    );
  }

  /** The entry while it is live on the store's clock; an expired one is deleted (bounded wait). */
  private unexpired<T>(
    meta: FailoverMetadata,
    store: FailoverStore,
    key: string,
    entry: FailoverEntry<T>,
  ): FailoverEntry<T> | undefined | Promise<undefined> {
    if (this.now(store) <= entry.expireOn.getTime()) return entry;
    const write = this.writer.delete(store, meta.name, meta.effectiveName, key);
    if (!write) return undefined;
    return this.guarded('delete', async () => {
      if ((await write) === false) throw new StoreWriteFailed();
    }).then(() => undefined);
  }

  private recover<T>(
    meta: FailoverMetadata,
    runtime: Runtime,
    store: FailoverStore,
    args: unknown[],
    rawKey: string,
    error: unknown,
  ): T | null | Promise<T | null> {
    this.metrics.upstreamFailed(meta.name, error);
    // An open circuit never called the upstream: always answer from the store if we can.
    if (!isBrokenCircuitError(error) && meta.recoverOn && !this.safeRecoverOn(meta, error)) {
      this.metrics.call(meta.name, 'not-recoverable');
      return Promise.reject(error);
    }
    const key = this.key(meta, runtime, rawKey);
    if (runtime.splitter)
      return this.gather<T>(meta, runtime, store, args, error).then((recovered) =>
        this.answer(meta, rawKey, key, args, error, recovered),
      );
    const now = this.lookupNow<T>(meta, store, key, runtime.entryType);
    if (now !== NOT_NOW && !(now instanceof Promise))
      return this.answer(meta, rawKey, key, args, error, now && markRecovered(now.payload, now.asOf, error));
    if (
      now === NOT_NOW &&
      this.storeGuard.closed &&
      this.writer.pendingEntry(store, meta.effectiveName, key) === undefined
    )
      return this.recoverFromRead(meta, store, rawKey, key, args, error, runtime.entryType);
    return (now === NOT_NOW ? this.lookup<T>(meta, store, key, runtime.entryType) : now).then((e) =>
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
    return this.storeGuard.bounded('find', read).then(
      (entry) => {
        this.storeGuard.succeededNow();
        const live = entry && this.unexpired(meta, store, key, entry);
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
        this.storeGuard.failedNow(storeError);
        if (storeError instanceof StoreTimeoutError) this.metrics.storeError('find-timeout');
        else this.recoveryFailed(meta, storeError);
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

  /**
   * `lookup` without a wait, when the store can read synchronously right now (SQLite with its
   * connection free, the memory store) and no write of the key is pending: NOT_NOW otherwise.
   * An expired entry is deleted as `lookup` does (a promise then, for the bounded delete).
   */
  private lookupNow<T>(
    meta: FailoverMetadata,
    store: FailoverStore,
    key: string,
    type?: PayloadType,
  ): FailoverEntry<T> | undefined | Promise<undefined> | typeof NOT_NOW {
    if (!canFindNow(store) || !this.storeGuard.closed) return NOT_NOW;
    if (this.writer.pendingEntry(store, meta.effectiveName, key) !== undefined) return NOT_NOW;
    let entry: FailoverEntry<T> | undefined | typeof NOT_NOW;
    try {
      entry = store.findNow<T>(meta.effectiveName, key, type);
    } catch (storeError) {
      this.storeGuard.failedNow(storeError);
      this.recoveryFailed(meta, storeError);
      return undefined;
    }
    if (entry !== NOT_NOW) this.storeGuard.succeededNow();
    if (entry === NOT_NOW || entry === undefined) return entry;
    return this.unexpired(meta, store, key, entry);
  }

  private recoveryFailed(meta: FailoverMetadata, storeError: unknown): void {
    this.metrics.storeError('find');
    this.logger.warn(
      `Failover '${meta.name}': recovery failed: ${(storeError as Error)?.message ?? storeError}`,
    );
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
        const now = this.now(store);
        const all = await this.guarded('findAll', () =>
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
        this.splitterFailed(meta, runtime, 'splitOnRecover', splitError);
        return undefined;
      }
      const lookups = sliceArgs.map((a) => async () => {
        const entry = await this.lookup(
          meta,
          store,
          this.key(meta, runtime, this.rawKey(runtime, a)),
          runtime.entryType,
        );
        return entry ? markRecovered(entry.payload, entry.asOf, error) : null;
      });
      const results = await this.scatter(lookups, (i) =>
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
      this.splitterFailed(meta, runtime, 'merge', mergeError);
      return undefined;
    }
  }

  private splitterFailed(
    meta: FailoverMetadata,
    runtime: Runtime,
    operation: PayloadSplitterError['operation'],
    cause: unknown,
  ): void {
    const error = new PayloadSplitterError(runtime.splitterName, operation, meta.name, cause);
    this.metrics.storeError(operation);
    this.logger.error(error.message);
  }

  private safeRecoverOn(meta: FailoverMetadata, error: unknown): boolean {
    try {
      return meta.recoverOn!(error) === true;
    } catch (predicateError) {
      this.logger.warn(
        `Failover '${meta.name}': recoverOn threw (${(predicateError as Error)?.message}); not recovering`,
      );
      return false;
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
