import { Inject, Injectable } from '@nestjs/common';
import { probeHealth, withTimeout, type HealthResult } from '@holdfast/core/kit';
import { FAILOVER_RESOLVED_OPTIONS } from '../failover.tokens';
import { getFailoverStoreToken } from '../failover.tokens';
import { FailoverExecutor } from '../executor/failover-executor';
import { FailoverWriter } from '../executor/failover-writer';
import type { FailoverStore } from '../store/failover-store';
import { FailoverMetrics } from '../metrics/failover.metrics';
import { FailoverUnhealthyError } from '../errors';
import type { ResolvedFailoverOptions } from '../failover.options';

/**
 * A @nestjs/terminus indicator: up when the store answers and calls use it (down while they skip
 * it after it was unreachable, until its background probe finds it back), with the write backlog
 * and error counts. Use it in a HealthCheckService.check([() => failoverHealth.isHealthy()]).
 */
@Injectable()
export class FailoverHealthIndicator {
  constructor(
    @Inject(getFailoverStoreToken()) private readonly store: FailoverStore,
    private readonly writer: FailoverWriter,
    private readonly metrics: FailoverMetrics,
    private readonly executor: FailoverExecutor,
    @Inject(FAILOVER_RESOLVED_OPTIONS) private readonly options: ResolvedFailoverOptions,
  ) {}

  async isHealthy<const Key extends string = 'failover'>(
    key: Key = 'failover' as Key,
  ): Promise<HealthResult<Key>> {
    const details = {
      store: this.store.description ?? 'custom',
      pendingWrites: this.writer.pending,
      storeErrors: this.metrics.storeErrors,
      droppedWrites: this.metrics.droppedWrites,
      storeSkipped: this.executor.storeSkipped,
    };
    return probeHealth(key, details, async () => {
      if (details.storeSkipped)
        throw new FailoverUnhealthyError('calls skip the store: it was unreachable moments ago');
      // Bounded like every store wait of a caller: a hung connection makes it down, not a hung probe.
      const bound = this.options.storeTimeout > 0 ? this.options.storeTimeout : 5_000;
      await withTimeout(this.store.ping?.() ?? Promise.resolve(), bound, () => {
        throw new FailoverUnhealthyError(`the store did not answer within ${bound} ms`);
      });
    });
  }
}
