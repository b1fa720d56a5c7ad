import { Inject, Injectable, Logger, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { SchedulerRegistry } from '@nestjs/schedule';
import { HoldfastError, HoldfastTimers } from '@holdfast/core/kit';
import type { FailoverMetadata } from '../decorator/failover-options';
import { FAILOVER_RESOLVED_OPTIONS, FAILOVER_STORE_NAME } from '../failover.constants';
import { failoverJobName } from '../failover.tokens';
import { FailoverMetrics } from '../health/failover.metrics';
import type { ResolvedFailoverModuleOptions } from '../options/failover-module.options';
import { PayloadCodec } from '../payload/payload-codec';
import type { FailoverStore } from '../store/failover-store';
import type { StoreGuard } from '../store/store-guard';
import { FailoverStores } from '../tenant/failover-stores';
import { FailoverKeeper } from './failover-keeper';
import { FailoverLookup } from './failover-lookup';
import { FailoverRecovery } from './failover-recovery';
import { FailoverRuntimes, type Runtime } from './failover-runtimes';
import { FailoverRegistry } from './failover.registry';
import { FailoverWriter } from './failover-writer';
import { StoreWriteFailed, failoverStoreGuard, guarded } from './guarded-store';

/**
 * Runs a @Failover method: calls the upstream (through a circuit breaker when configured),
 * keeps each good value (or each slice of it) through the {@link FailoverKeeper}, and answers
 * from the store through the {@link FailoverRecovery} when the upstream fails. Reached from the
 * decorated method by property injection.
 */
@Injectable()
export class FailoverExecutor implements OnApplicationShutdown {
  private readonly logger = new Logger(FailoverExecutor.name);
  /** Bounds every store wait of a caller, and skips the store while it is unreachable. */
  private readonly storeGuard: StoreGuard;
  private readonly runtimes: FailoverRuntimes;
  private readonly keeper: FailoverKeeper;
  private readonly recovery: FailoverRecovery;

  constructor(
    @Inject(FAILOVER_RESOLVED_OPTIONS) options: ResolvedFailoverModuleOptions,
    private readonly stores: FailoverStores,
    private readonly writer: FailoverWriter,
    private readonly metrics: FailoverMetrics,
    private readonly registry: FailoverRegistry,
    codec: PayloadCodec,
    @Optional() moduleRef?: ModuleRef,
    @Optional() schedulerRegistry?: SchedulerRegistry,
    @Optional() @Inject(FAILOVER_STORE_NAME) storeName?: string,
  ) {
    this.storeGuard = failoverStoreGuard(options.storeTimeout, this.logger);
    // While the store is skipped, its ping (the global store's) tells when it answers again.
    const ping = stores.ping();
    if (ping) {
      const probe = failoverJobName('store-probe', storeName);
      this.storeGuard.probeWith(ping, new HoldfastTimers(schedulerRegistry), probe);
    }
    this.runtimes = new FailoverRuntimes(options, metrics, this.logger, moduleRef);
    this.keeper = new FailoverKeeper(options, writer, codec, metrics, this.runtimes, this.logger);
    const lookups = new FailoverLookup(writer, this.storeGuard, metrics, this.logger);
    this.recovery = new FailoverRecovery(
      options,
      this.runtimes,
      lookups,
      this.storeGuard,
      writer,
      metrics,
      this.logger,
      moduleRef,
    );
  }

  /** True while calls skip the store (it was unreachable moments ago): readiness should say so. */
  get storeSkipped(): boolean {
    return !this.storeGuard.closed;
  }

  onApplicationShutdown(): void {
    this.storeGuard.stop();
  }

  /**
   * Written with `then` rather than `async` (like the recovery and the store guard): an
   * `await` on a failed upstream resumes the function only to throw into it and catch again,
   * which shows on a recovery answered by a SQLite read of a few microseconds.
   */
  execute<T>(
    meta: FailoverMetadata,
    instance: unknown,
    upstream: (...args: any[]) => unknown,
    args: unknown[],
  ): Promise<T | null> {
    try {
      const forCall = this.stores.forCall();
      // A tenant's store seen for the first time: built before anything else.
      if (forCall instanceof Promise)
        return forCall.then((built) => this.executeWith<T>(meta, instance, upstream, args, built));
      return this.executeWith<T>(meta, instance, upstream, args, forCall);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private executeWith<T>(
    meta: FailoverMetadata,
    instance: unknown,
    upstream: (...args: any[]) => unknown,
    args: unknown[],
    store: FailoverStore,
  ): Promise<T | null> {
    const runtime = this.runtimes.get(meta);
    // Before the upstream: an argument that cannot be keyed fails the call the same way up or down.
    return this.call<T>(meta, instance, upstream, args, store, runtime, this.runtimes.rawKey(runtime, args));
  }

  /** The upstream, then the value kept or the failure recovered (settled in one continuation). */
  private call<T>(
    meta: FailoverMetadata,
    instance: unknown,
    upstream: (...args: any[]) => unknown,
    args: unknown[],
    store: FailoverStore,
    runtime: Runtime,
    rawKey: string,
  ): Promise<T | null> {
    let result: unknown;
    try {
      result = runtime.breaker
        ? runtime.breaker.execute(() => upstream.apply(instance, args))
        : upstream.apply(instance, args);
    } catch (error) {
      // A synchronous throw is recovered in this turn, as the awaited call did.
      try {
        return Promise.resolve(this.recovery.recover<T>(meta, runtime, store, args, rawKey, error));
      } catch (recoveryError) {
        return Promise.reject(recoveryError);
      }
    }
    return (result instanceof Promise ? result : Promise.resolve(result)).then(
      (value) => this.succeeded(meta, runtime, store, args, rawKey, value as T),
      (error: unknown) => this.recovery.recover<T>(meta, runtime, store, args, rawKey, error),
    );
  }

  /** A good value: kept (waiting for the store when the write is synchronous), then returned. */
  private succeeded<T>(
    meta: FailoverMetadata,
    runtime: Runtime,
    store: FailoverStore,
    args: unknown[],
    rawKey: string,
    value: T,
  ): T | Promise<T> {
    if (value !== null && value !== undefined) {
      if (this.storeGuard.open) {
        this.metrics.storeSkipped('store');
      } else {
        // Written at once when the store can (a write that cannot wait needs no bound).
        const kept = this.keeper.keep(meta, runtime, store, args, rawKey, value, this.storeGuard.closed);
        if (kept === true) this.storeGuard.succeededNow();
        else if (kept === false) this.storeGuard.failedNow(new StoreWriteFailed());
        else if (kept)
          return guarded(this.storeGuard, this.metrics, 'store', async () => {
            // A failed write (already logged and counted) is a failure for the store breaker too.
            if ((await kept) === false) throw new StoreWriteFailed();
          }).then(() => {
            this.metrics.call(meta.name, 'success');
            return value;
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
  prepare(meta: FailoverMetadata, moduleRef?: ModuleRef): Promise<void> {
    return this.runtimes.prepare(meta, moduleRef);
  }
}
