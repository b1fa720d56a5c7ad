import { Inject, Injectable } from '@nestjs/common';
import { SimbaMetrics } from '../health/simba.metrics';
import { SIMBA_RESOLVED_OPTIONS } from '../simba.constants';
import type { ResolvedSimbaOptions } from '../simba.options';
import { MutexContendService, type ContendTiming } from './mutex-contend.service';
import type { MutexContender } from './mutex-contender';
import { MutexWakeup } from './mutex-wakeup';
import { SimbaConnection } from './simba-connection';

/** Creates contend services on the module's DataSource and timing. The service is not started. */
@Injectable()
export class MutexContendServiceFactory {
  private readonly wakeup = new MutexWakeup();

  constructor(
    private readonly connection: SimbaConnection,
    @Inject(SIMBA_RESOLVED_OPTIONS) private readonly options: ResolvedSimbaOptions,
    private readonly metrics: SimbaMetrics,
  ) {}

  createMutexContendService(
    contender: MutexContender,
    timing: Partial<ContendTiming> = {},
  ): MutexContendService {
    return new MutexContendService(
      contender,
      this.connection.repository,
      {
        ttl: this.options.ttl,
        transition: this.options.transition,
        initialDelay: this.options.initialDelay,
        standbyPoll: this.options.standbyPoll,
        statementTimeout: this.options.statementTimeout,
        ...timing,
      },
      this.wakeup,
      this.metrics,
    );
  }
}
