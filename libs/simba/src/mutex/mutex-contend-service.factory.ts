import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { SimbaDisabledError } from '../errors';
import { SimbaMetrics } from '../metrics/simba.metrics';
import { SIMBA_OPTIONS } from '../simba.tokens';
import type { ResolvedSimbaOptions } from '../simba.options';
import { MutexContendService, type ContendTiming } from './mutex-contend.service';
import type { MutexContender } from './mutex-contender';
import { MutexWakeup } from './mutex-wakeup';
import { SimbaConnection } from './simba-connection';

/**
 * Creates contend services on the module's DataSource and timing. The service is not started.
 * A started service keeps the process alive until it stops; one its owner left running at
 * app.close() lets it go then (its timers end with the module: SimbaConnection clears them).
 */
@Injectable()
export class MutexContendServiceFactory implements OnApplicationShutdown {
  private readonly wakeup = new MutexWakeup();
  /** The process holds of this factory's running services (each adds its own at start()). */
  private readonly holds = new Set<() => void>();

  constructor(
    private readonly connection: SimbaConnection,
    @Inject(SIMBA_OPTIONS) private readonly options: ResolvedSimbaOptions,
    private readonly metrics: SimbaMetrics,
  ) {}

  createMutexContendService(
    contender: MutexContender,
    timing: Partial<ContendTiming> = {},
  ): MutexContendService {
    if (!this.options.enabled)
      throw new SimbaDisabledError(`createMutexContendService('${contender.mutex}')`);
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
      this.holds,
    );
  }

  /** Last, after every module's own shutdown: nothing of Simba's holds the process any more. */
  onApplicationShutdown(): void {
    for (const release of this.holds) release();
    this.holds.clear();
  }
}
