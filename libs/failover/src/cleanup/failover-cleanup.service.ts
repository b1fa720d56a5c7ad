import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { FAILOVER_RESOLVED_OPTIONS, getFailoverStoreToken } from '../failover.constants';
import { FailoverMetrics } from '../health/failover.metrics';
import type { ResolvedFailoverModuleOptions } from '../options/failover-module.options';
import type { FailoverStore } from '../store/failover-store';
import { FailoverStores } from '../tenant/failover-stores';

export const FAILOVER_CLEANUP_JOB = 'holdfast-failover-cleanup';

/**
 * Deletes expired entries on a cron schedule (default hourly). The cutoff is the store's clock:
 * the database clock for SQL stores. The job is registered in @nestjs/schedule's
 * SchedulerRegistry when the app uses ScheduleModule, and stopped on shutdown either way.
 */
@Injectable()
export class FailoverCleanupService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(FailoverCleanupService.name);
  private job?: CronJob;
  private running?: Promise<number>;

  constructor(
    @Inject(FAILOVER_RESOLVED_OPTIONS) private readonly options: ResolvedFailoverModuleOptions,
    @Inject(getFailoverStoreToken()) private readonly store: FailoverStore,
    private readonly stores: FailoverStores,
    private readonly metrics: FailoverMetrics,
    @Optional() private readonly schedulerRegistry?: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.options.cleanup.enabled) return;
    this.job = CronJob.from({
      cronTime: this.options.cleanup.cron,
      onTick: () => void this.cleanup(),
      start: false,
    });
    if (this.schedulerRegistry && !this.schedulerRegistry.doesExist('cron', FAILOVER_CLEANUP_JOB)) {
      this.schedulerRegistry.addCronJob(FAILOVER_CLEANUP_JOB, this.job as never);
    }
    this.job.start();
  }

  /**
   * Deletes every entry that expired before the store's clock, in the global table and every
   * tenant table (listed or used); returns how many. A table that fails is logged and skipped.
   */
  async cleanup(): Promise<number> {
    if (this.running) return this.running;
    this.running = (async () => {
      let removed = 0;
      try {
        const cutoff = this.store.now ? await this.store.now() : new Date();
        for (const store of await this.stores.all()) {
          try {
            removed += await store.cleanByExpiry(cutoff);
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
    this.job?.stop();
    if (this.schedulerRegistry?.doesExist('cron', FAILOVER_CLEANUP_JOB)) {
      this.schedulerRegistry.deleteCronJob(FAILOVER_CLEANUP_JOB);
    }
    await this.running;
  }
}
