import { Inject, Injectable } from '@nestjs/common';
import { probeHealth, type HealthResult } from '@holdfast/core';
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
  constructor(
    @Inject(getFailoverStoreToken()) private readonly store: FailoverStore,
    private readonly writer: FailoverWriter,
    private readonly metrics: FailoverMetrics,
  ) {}

  async isHealthy<const Key extends string = 'failover'>(
    key: Key = 'failover' as Key,
  ): Promise<HealthResult<Key>> {
    const details = {
      store: this.store.description ?? 'custom',
      pendingWrites: this.writer.pending,
      storeErrors: this.metrics.storeErrors,
      droppedWrites: this.metrics.droppedWrites,
    };
    return probeHealth(key, details, async () => {
      await this.store.ping?.();
    });
  }
}
