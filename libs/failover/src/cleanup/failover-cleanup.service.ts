import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import { findSchedulerRegistry, HoldfastTimers, instanceId } from '@holdfast/core/kit';
import { ModuleRef } from '@nestjs/core';
import { FAILOVER_RESOLVED_OPTIONS, FAILOVER_STORE_NAME } from '../failover.tokens';
import { failoverJobName, getFailoverStoreToken } from '../failover.tokens';
import { FailoverMetrics } from '../metrics/failover.metrics';
import type { ResolvedFailoverOptions } from '../failover.options';
import type { FailoverStore } from '../store/failover-store';
import { FailoverStores } from '../tenant/failover-stores';
import { cronDelayMillis, cronPeriodMillis } from './schedule-cron';

/** The cleanup timer of the default FailoverModule; a named one's is `holdfast:failover:<name>:cleanup`. */
export const FAILOVER_CLEANUP_JOB = failoverJobName('cleanup', undefined);

/**
 * Deletes expired entries on a cron schedule (default hourly). Like every Holdfast cleanup it runs
 * on Holdfast's own timer, armed for the expression's next firing (read with `cron`, the parser
 * @nestjs/schedule uses) and registered in the app's SchedulerRegistry when @nestjs/schedule is
 * loaded: it runs whether or not the application imports ScheduleModule, and stops at shutdown.
 *
 * Once per cluster: each tick first claims a lease row in the store's own table, valid for
 * half the cron period on the database clock; the instance that gets it cleans, the others
 * skip that tick (no Simba needed). The cutoff is the store's (database) clock; rows go in
 * bounded batches (`cleanup.batchSize`), each its own short transaction.
 */
@Injectable()
export class FailoverCleanupService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(FailoverCleanupService.name);
  private readonly owner = instanceId();
  private readonly leaseMs: number;
  private readonly timers: HoldfastTimers;
  private readonly timerName: string;
  private running?: Promise<number>;
  private closed = false;

  constructor(
    @Inject(FAILOVER_RESOLVED_OPTIONS) private readonly options: ResolvedFailoverOptions,
    @Inject(getFailoverStoreToken()) private readonly store: FailoverStore,
    private readonly stores: FailoverStores,
    private readonly metrics: FailoverMetrics,
    moduleRef: ModuleRef,
    @Optional() @Inject(FAILOVER_STORE_NAME) storeName?: string,
  ) {
    const { enabled, cron } = options.cleanup;
    this.leaseMs = enabled ? Math.max(1_000, Math.floor(cronPeriodMillis(cron) / 2)) : 0;
    this.timers = new HoldfastTimers(() => findSchedulerRegistry(moduleRef));
    this.timerName = failoverJobName('cleanup', storeName);
  }

  onApplicationBootstrap(): void {
    if (this.options.cleanup.enabled) this.arm();
  }

  /** Arms the timer for the cron expression's next firing; each tick arms the next. */
  private arm(): void {
    if (this.closed) return;
    this.timers.set(this.timerName, cronDelayMillis(this.options.cleanup.cron), () => {
      void this.tick().finally(() => this.arm());
    });
  }

  /** One scheduled run: cleans only when this instance wins the cluster-wide lease for the tick. */
  async tick(): Promise<number> {
    if (this.closed) return 0;
    try {
      if (this.store.claimCleanup && !(await this.store.claimCleanup(this.leaseMs, this.owner))) {
        this.metrics.cleanupSkipped();
        return 0;
      }
    } catch (error) {
      this.metrics.storeError('claimCleanup');
      this.logger.warn(`Failover cleanup lease could not be claimed: ${(error as Error)?.message ?? error}`);
      return 0;
    }
    return this.cleanup();
  }

  /**
   * Deletes every entry that expired before the store's clock, in the global table and every
   * tenant table (listed or used), in bounded batches; returns how many. Runs now, on this
   * instance (the scheduled tick adds the lease). A table that fails is logged and skipped.
   */
  async cleanup(): Promise<number> {
    if (this.running) return this.running;
    this.running = (async () => {
      let removed = 0;
      try {
        const cutoff = this.store.now ? await this.store.now() : new Date();
        const batch = {
          batchSize: this.options.cleanup.batchSize,
          pause: this.options.cleanup.pause,
          onBatch: (rows: number) => this.metrics.cleanupBatch(rows),
        };
        for (const store of await this.stores.all()) {
          try {
            removed += await store.cleanByExpiry(cutoff, batch);
          } catch (error) {
            this.metrics.storeError('cleanByExpiry');
            this.logger.warn(
              `Failover cleanup of ${store.description ?? 'a store'} failed: ${(error as Error)?.message ?? error}`,
            );
          }
        }
        if (removed) this.logger.log(`Removed ${removed} expired failover entries`);
      } catch (error) {
        this.metrics.storeError('cleanByExpiry');
        this.logger.warn(`Failover cleanup failed: ${(error as Error)?.message ?? error}`);
      } finally {
        this.running = undefined;
      }
      return removed;
    })();
    return this.running;
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.closed = true;
    this.timers.clearAll();
    await this.running;
  }
}
