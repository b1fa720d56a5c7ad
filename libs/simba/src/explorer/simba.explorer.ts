import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { discoverHandlers, discoverInstances, discoverMethods } from '@holdfast/core/kit';
import { InvalidMutexContenderError } from '../errors';
import {
  assertContenderId,
  assertUserMutexName,
  defaultContenderId,
  type MutexContender,
} from '../mutex/mutex-contender';
import type { MutexState } from '../mutex/mutex-state';
import {
  LEADER_ONLY,
  MUTEX_CONTENDER_PROVIDER,
  ON_MUTEX_ACQUIRED,
  ON_MUTEX_RELEASED,
} from '../simba.constants';
import { SimbaOrchestrator } from './simba.orchestrator';

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
 * Simba's discovery, as `@nestjs/schedule`'s explorer: finds `@OnMutexAcquired`,
 * `@OnMutexReleased` and `@LeaderOnly` methods and `@MutexContenderProvider()` providers at
 * module init (one contender per decorated mutex, fanning out to its methods), checks them, and
 * hands them to the {@link SimbaOrchestrator}, which runs them. It starts nothing itself.
 */
@Injectable()
export class SimbaExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly orchestrator: SimbaOrchestrator,
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
    this.orchestrator.addContenders([...contenders.values()], providers);
  }
}
