import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnModuleInit,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { discoverHandlers, discoverInstances, discoverMethods } from '@holdfast/core/kit';
import { InvalidMutexContenderError } from '../errors';
import {
  assertContenderId,
  assertUserMutexName,
  defaultContenderId,
  type MutexContender,
} from '../mutex/mutex-contender';
import { MutexContendRegistry } from '../mutex/mutex-contend.registry';
import { SimbaConnection } from '../mutex/simba-connection';
import { MutexContendServiceFactory } from '../mutex/mutex-contend-service.factory';
import type { MutexState } from '../mutex/mutex-state';
import { ContendServiceStatus, type MutexContendService } from '../mutex/mutex-contend.service';
import {
  LEADER_ONLY,
  MUTEX_CONTENDER_PROVIDER,
  ON_MUTEX_ACQUIRED,
  ON_MUTEX_RELEASED,
} from '../simba.constants';
import { SIMBA_OPTIONS } from '../simba.tokens';
import type { ResolvedSimbaOptions } from '../simba.options';

type Handler = (state: MutexState) => unknown;

/** One contender per mutex that fans the callbacks out to every decorated method, in discovery order. */
class DiscoveredContender implements MutexContender {
  readonly acquired: Handler[] = [];
  readonly released: Handler[] = [];

  constructor(
    readonly mutex: string,
    readonly contenderId = defaultContenderId(mutex),
  ) {}

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

/** Throws InvalidMutexContenderError unless `instance` has what a MutexContender needs. */
function assertContender(instance: Record<string, unknown>, declaredOn: string): MutexContender {
  for (const callback of ['onAcquired', 'onReleased']) {
    if (typeof instance[callback] !== 'function') {
      throw new InvalidMutexContenderError(declaredOn, `it has no ${callback}() method`);
    }
  }
  try {
    assertUserMutexName(instance.mutex);
    assertContenderId(instance.contenderId);
  } catch (error) {
    throw new InvalidMutexContenderError(declaredOn, (error as Error).message);
  }
  return instance as unknown as MutexContender;
}

/**
 * Finds `@OnMutexAcquired`, `@OnMutexReleased` and `@LeaderOnly` methods and
 * `@MutexContenderProvider()` providers at module init, starts one contend service per mutex
 * for the methods and one per contender provider at bootstrap, and stops them (releasing the
 * rows) before shutdown. With `enabled: false` it creates and starts nothing.
 */
@Injectable()
export class SimbaExplorer implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(SimbaExplorer.name);
  /** Every contend service this explorer created: the decorated mutexes', then the contender providers'. */
  private readonly services: MutexContendService[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly factory: MutexContendServiceFactory,
    private readonly registry: MutexContendRegistry,
    @Inject(SIMBA_OPTIONS) private readonly options: ResolvedSimbaOptions,
    private readonly connection: SimbaConnection,
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
    const providers = discoverInstances<true>(
      this.discovery,
      MUTEX_CONTENDER_PROVIDER,
      '@MutexContenderProvider()',
    ).map(({ instance, declaredOn }) => assertContender(instance, declaredOn));
    if (!this.options.enabled) {
      if (contenders.size || providers.length) {
        this.logger.log(
          `SimbaModule is disabled (enabled: false): not contending for ${[...new Set([...contenders.keys(), ...providers.map((p) => p.mutex)])].join(', ')}`,
        );
      }
      return;
    }
    for (const c of contenders.values()) {
      const service = this.factory.createMutexContendService(c);
      this.registry.add(service);
      this.services.push(service);
    }
    for (const provided of providers) {
      const service = this.factory.createMutexContendService(provided);
      // The registry answers per mutex: a decorated method's service for that mutex comes first.
      if (!this.registry.get(provided.mutex)) this.registry.add(service);
      this.services.push(service);
    }
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.options.autoStart || !this.options.enabled || !this.services.length) return;
    // Holdfast's connections first (ConnectionBudget): no round before they are open, and an
    // instance the server has no room for starts nothing.
    await this.connection.admitted();
    for (const service of this.services) {
      service.start();
      this.logger.log(`Contending for mutex '${service.mutex}' as ${service.contenderId}`);
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(
      this.services
        .filter((s) => s.status === ContendServiceStatus.RUNNING)
        .map((s) =>
          s
            .stop()
            .catch((error) => this.logger.warn(`Stopping mutex '${s.mutex}': ${(error as Error).message}`)),
        ),
    );
  }
}
