import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import { Cron, SchedulerRegistry } from '@nestjs/schedule';
import { instanceId } from '@holdfast/core/kit';
import { FAILOVER_RESOLVED_OPTIONS, FAILOVER_STORE_NAME } from '../failover.tokens';
import { failoverJobName, getFailoverStoreToken } from '../failover.tokens';
import { FailoverMetrics } from '../metrics/failover.metrics';
import type { ResolvedFailoverOptions } from '../failover.options';
import type { FailoverStore } from '../store/failover-store';
import { FailoverStores } from '../tenant/failover-stores';
import { cronPeriodMillis } from './schedule-cron';

/** The cron job of the default FailoverModule; a named one's is `holdfast:failover:<name>:cleanup`. */
export const FAILOVER_CLEANUP_JOB = failoverJobName('cleanup', undefined);

/**
 * Deletes expired entries on a cron schedule (default hourly), through @nestjs/schedule: the
 * job is this instance's `tick`, declared with @Cron() when the service is built (the
 * expression comes from the options), so the app's ScheduleModule runs and stops it.
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
  private running?: Promise<number>;
  private closed = false;

  constructor(
    @Inject(FAILOVER_RESOLVED_OPTIONS) private readonly options: ResolvedFailoverOptions,
    @Inject(getFailoverStoreToken()) private readonly store: FailoverStore,
    private readonly stores: FailoverStores,
    private readonly metrics: FailoverMetrics,
    @Optional() private readonly schedulerRegistry?: SchedulerRegistry,
  ) {
    const { enabled, cron } = options.cleanup;
    this.leaseMs = enabled ? Math.max(1_000, Math.floor(cronPeriodMillis(cron) / 2)) : 0;
  }

  onApplicationBootstrap(): void {
    if (this.options.cleanup.enabled && !this.schedulerRegistry) {
      this.logger.warn(
        'Failover cleanup is scheduled through @nestjs/schedule, which this app does not load: import ' +
          'ScheduleModule.forRoot() (or call FailoverCleanupService.cleanup() yourself), or set cleanup.enabled: false.',
      );
    }
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
    await this.running;
  }
}

/**
 * The cleanup's job: `FailoverCleanupService.tick` on the module's cron, declared with @Cron()
 * when the module is built (the expression comes from the options), so the app's ScheduleModule
 * runs and stops it. A provider of its own that no named FailoverModule aliases:
 * @nestjs/schedule 12 registers the jobs of every provider it finds, aliases included, so a job
 * declared on the (aliased) service of a named module would be registered twice.
 */
@Injectable()
export class FailoverCleanupSchedule {
  constructor(
    private readonly cleanup: FailoverCleanupService,
    @Inject(FAILOVER_RESOLVED_OPTIONS) options: ResolvedFailoverOptions,
    @Optional() @Inject(FAILOVER_STORE_NAME) storeName?: string,
  ) {
    const { enabled, cron } = options.cleanup;
    if (enabled) {
      // This instance's own tick, carrying the @Cron() metadata ScheduleModule's explorer reads.
      const tick = () => cleanup.tick();
      Cron(cron, { name: failoverJobName('cleanup', storeName) })(this, 'tick', { value: tick });
      Object.defineProperty(this, 'tick', { value: tick });
    }
  }

  /** One scheduled run (see FailoverCleanupService.tick). */
  tick(): Promise<number> {
    return this.cleanup.tick();
  }
}
