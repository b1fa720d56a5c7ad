import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { SimbaDisabledError } from '../errors';
import { SimbaMetrics, UNCOUNTED_METRICS, type MutexMetrics } from '../metrics/simba.metrics';
import { SIMBA_OPTIONS } from '../simba.tokens';
import type { ResolvedSimbaOptions } from '../simba.options';
import { MutexContendService, type ContendTiming } from './mutex-contend.service';
import { assertUserMutexName, type MutexContender } from './mutex-contender';
import { MutexSpread } from './mutex-spread';
import { MutexWakeup } from './mutex-wakeup';
import { SimbaConnection } from './simba-connection';

/** A spread group's member rows are rows, not mutexes: they count in no metric. */
/**
 * Creates contend services on the module's DataSource and timing. The service is not started.
 * A started service keeps the process alive until it stops; one its owner left running at
 * app.close() lets it go then (its timers end with the module: SimbaConnection clears them).
 * The mutexes of the module's `spread` groups are spread over the instances (MutexSpread).
 */
@Injectable()
export class MutexContendServiceFactory implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly wakeup = new MutexWakeup();
  /** The process holds of this factory's running services (each adds its own at start()). */
  private readonly holds = new Set<() => void>();
  private readonly spread?: MutexSpread;

  constructor(
    private readonly connection: SimbaConnection,
    @Inject(SIMBA_OPTIONS) private readonly options: ResolvedSimbaOptions,
    private readonly metrics: SimbaMetrics,
  ) {
    if (options.spread.length) {
      this.spread = new MutexSpread(
        options.spread,
        () => connection.repository,
        this.timing(),
        (mutex, id) =>
          this.service(
            { mutex, contenderId: id, onAcquired: () => undefined, onReleased: () => undefined },
            {},
            UNCOUNTED_METRICS,
          ),
      );
    }
  }

  /**
   * A contend service for `contender`, with the module's timing unless `timing` overrides it. A
   * mutex of a `spread` group is spread over the instances unless `options.spread` is false (a
   * `SimbaLocker`'s: a blocking acquire wants its mutex).
   */
  createMutexContendService(
    contender: MutexContender,
    timing: Partial<ContendTiming> = {},
    options: { spread?: boolean } = {},
  ): MutexContendService {
    if (!this.options.enabled)
      throw new SimbaDisabledError(`createMutexContendService('${contender.mutex}')`);
    assertUserMutexName(contender.mutex);
    const service = this.service(contender, timing, this.metrics);
    if (options.spread !== false) this.spread?.enrol(service);
    return service;
  }

  private service(
    contender: MutexContender,
    timing: Partial<ContendTiming>,
    metrics: MutexMetrics,
  ): MutexContendService {
    return new MutexContendService(
      contender,
      this.connection.repository,
      { ...this.timing(), ...timing },
      this.wakeup,
      metrics,
      this.holds,
    );
  }

  private timing(): ContendTiming {
    return {
      ttl: this.options.ttl,
      transition: this.options.transition,
      initialDelay: this.options.initialDelay,
      standbyPoll: this.options.standbyPoll,
      statementTimeout: this.options.statementTimeout,
    };
  }

  /** No more membership reads once the application shuts down (its services stop meanwhile). */
  beforeApplicationShutdown(): void {
    this.spread?.stop();
  }

  /** Last, after every module's own shutdown: nothing of Simba's holds the process any more. */
  onApplicationShutdown(): void {
    for (const release of this.holds) release();
    this.holds.clear();
  }
}
