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

  /** Deletes every entry that expired before the store's clock; returns how many. */
  async cleanup(): Promise<number> {
    if (this.running) return this.running;
    this.running = (async () => {
      try {
        const cutoff = this.store.now ? await this.store.now() : new Date();
        const removed = await this.store.cleanByExpiry(cutoff);
        if (removed) this.logger.log(`Removed ${removed} expired failover entries`);
        return removed;
      } catch (error) {
        this.metrics.storeError('cleanByExpiry');
        this.logger.warn(`Failover cleanup failed: ${(error as Error)?.message ?? error}`);
        return 0;
      } finally {
        this.running = undefined;
      }
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
