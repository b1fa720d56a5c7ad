import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { getFailoverStoreToken } from '../failover.constants';
import { FailoverWriter } from '../executor/failover-writer';
import type { FailoverStore } from '../store/failover-store';
import { FailoverMetrics } from './failover.metrics';

/**
 * A @nestjs/terminus indicator: up when the store answers, with the write backlog and error
 * counts. Use it in a HealthCheckService.check([() => failoverHealth.isHealthy()]).
 */
@Injectable()
export class FailoverHealthIndicator {
  private readonly indicator = new HealthIndicatorService();

  constructor(
    @Inject(getFailoverStoreToken()) private readonly store: FailoverStore,
    private readonly writer: FailoverWriter,
    private readonly metrics: FailoverMetrics,
  ) {}

  async isHealthy<K extends string = 'failover'>(
    key: K = 'failover' as K,
  ): Promise<HealthIndicatorResult<K>> {
    const session = this.indicator.check(key);
    const details = {
      store: this.store.description ?? 'custom',
      pendingWrites: this.writer.pending,
      storeErrors: this.metrics.storeErrors,
      droppedWrites: this.metrics.droppedWrites,
    };
    try {
      await this.store.ping?.();
      return session.up(details);
    } catch (error) {
      return session.down({ ...details, message: (error as Error)?.message ?? String(error) });
    }
  }
}
