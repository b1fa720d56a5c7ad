import { Inject, Injectable, Logger, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { findSchedulerRegistry, HoldfastTimers } from '@holdfast/core/kit';
import { ModuleRef } from '@nestjs/core';
import { FAILOVER_RESOLVED_OPTIONS, FAILOVER_STORE_NAME, failoverJobName } from '../failover.tokens';
import type { ResolvedFailoverOptions } from '../failover.options';
import { FailoverMetrics } from '../metrics/failover.metrics';
import { PayloadCodec } from '../payload/payload-codec';
import type { StoreGuard } from '../store/store-guard';
import { FailoverStores } from '../tenant/failover-stores';
import { FailoverRuntimes } from './failover-runtimes';
import { FailoverWriter } from './failover-writer';
import { failoverStoreGuard } from './guarded-store';

/**
 * The module's store breaker: bounds every store wait of a caller and skips the store while it
 * is unreachable; while it is skipped, the global store's ping tells when it answers again.
 */
@Injectable()
export class FailoverStoreBreaker implements OnApplicationShutdown {
  readonly guard: StoreGuard;

  constructor(
    @Inject(FAILOVER_RESOLVED_OPTIONS) options: ResolvedFailoverOptions,
    stores: FailoverStores,
    moduleRef: ModuleRef,
    @Optional() @Inject(FAILOVER_STORE_NAME) storeName?: string,
  ) {
    this.guard = failoverStoreGuard(options.storeTimeout, new Logger('FailoverExecutor'));
    const ping = stores.ping();
    if (ping)
      this.guard.probeWith(
        ping,
        new HoldfastTimers(() => findSchedulerRegistry(moduleRef)),
        failoverJobName('store-probe', storeName),
      );
  }

  onApplicationShutdown(): void {
    this.guard.stop();
  }
}

/**
 * What the executor's parts (keeper, lookup, recovery, freshness) share, one per module: the
 * options, each failover's runtime, the write-behind writer, the store breaker's guard, the
 * metrics and the payload codec.
 */
@Injectable()
export class FailoverParts {
  /** Bounds every store wait of a caller, and skips the store while it is unreachable. */
  readonly guard: StoreGuard;

  constructor(
    @Inject(FAILOVER_RESOLVED_OPTIONS) readonly options: ResolvedFailoverOptions,
    readonly runtimes: FailoverRuntimes,
    readonly writer: FailoverWriter,
    breaker: FailoverStoreBreaker,
    readonly metrics: FailoverMetrics,
    readonly codec: PayloadCodec,
  ) {
    this.guard = breaker.guard;
  }
}
