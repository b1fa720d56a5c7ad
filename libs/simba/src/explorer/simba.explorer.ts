import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnModuleInit,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { discoverHandlers, discoverMethods } from '@holdfast/core/kit';
import { defaultContenderId, type MutexContender } from '../mutex/mutex-contender';
import { MutexContendRegistry } from '../mutex/mutex-contend.registry';
import { MutexContendServiceFactory } from '../mutex/mutex-contend-service.factory';
import type { MutexState } from '../mutex/mutex-state';
import { ContendServiceStatus } from '../mutex/mutex-contend.service';
import {
  LEADER_ONLY,
  ON_MUTEX_ACQUIRED,
  ON_MUTEX_RELEASED,
  SIMBA_RESOLVED_OPTIONS,
} from '../simba.constants';
import type { ResolvedSimbaOptions } from '../simba.options';

type Handler = (state: MutexState) => unknown;

/** One contender per mutex that fans the callbacks out to every decorated method, in discovery order. */
class DiscoveredContender implements MutexContender {
  readonly contenderId = defaultContenderId();
  readonly acquired: Handler[] = [];
  readonly released: Handler[] = [];

  constructor(readonly mutex: string) {}

  async onAcquired(state: MutexState): Promise<void> {
    await this.each(this.acquired, state);
  }

  async onReleased(state: MutexState): Promise<void> {
    await this.each(this.released, state);
  }

  /** Each handler runs even if an earlier one throws; failures are logged by the service. */
  private async each(handlers: Handler[], state: MutexState): Promise<void> {
    const errors: unknown[] = [];
    for (const handler of handlers) {
      try {
        await handler(state);
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} handlers failed`);
  }
}

/**
 * Finds `@OnMutexAcquired`, `@OnMutexReleased` and `@LeaderOnly` methods at module init, starts one
 * contend service per mutex at bootstrap and stops them (releasing the rows) before shutdown.
 */
@Injectable()
export class SimbaExplorer implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(SimbaExplorer.name);

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly factory: MutexContendServiceFactory,
    private readonly registry: MutexContendRegistry,
    @Inject(SIMBA_RESOLVED_OPTIONS) private readonly options: ResolvedSimbaOptions,
  ) {}

  onModuleInit(): void {
    const contenders = new Map<string, DiscoveredContender>();
    const contender = (mutex: string) => {
      let c = contenders.get(mutex);
      if (!c) contenders.set(mutex, (c = new DiscoveredContender(mutex)));
      return c;
    };
    const find = (key: string, decorator: string) =>
      discoverHandlers<string[]>(this.discovery, this.scanner, key, decorator);
    for (const { metadata, instance, methodName } of find(ON_MUTEX_ACQUIRED, '@OnMutexAcquired()')) {
      for (const mutex of metadata) {
        contender(mutex).acquired.push((state) => (instance[methodName] as Handler).call(instance, state));
      }
    }
    for (const { metadata, instance, methodName } of find(ON_MUTEX_RELEASED, '@OnMutexReleased()')) {
      for (const mutex of metadata) {
        contender(mutex).released.push((state) => (instance[methodName] as Handler).call(instance, state));
      }
    }
    // @LeaderOnly wraps the method itself, so it works on a provider of any scope.
    for (const { metadata } of discoverMethods<string[]>(this.discovery, this.scanner, LEADER_ONLY)) {
      for (const mutex of metadata) contender(mutex);
    }
    for (const c of contenders.values()) this.registry.add(this.factory.createMutexContendService(c));
  }

  onApplicationBootstrap(): void {
    if (!this.options.autoStart) return;
    for (const service of this.registry.all()) {
      service.start();
      this.logger.log(`Contending for mutex '${service.mutex}' as ${service.contenderId}`);
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(
      this.registry
        .all()
        .filter((s) => s.status === ContendServiceStatus.RUNNING)
        .map((s) =>
          s
            .stop()
            .catch((error) => this.logger.warn(`Stopping mutex '${s.mutex}': ${(error as Error).message}`)),
        ),
    );
  }
}
