import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import type { LockHandlerOptions } from '../decorators/on-lock.decorators';
import { LOCK_ACQUIRED_HANDLER, LOCK_LOST_HANDLER } from '../locker.constants';

export interface LockHandler {
  readonly name: string;
  readonly lockName?: string;
  invoke(event: unknown): Promise<unknown>;
}

/** Finds @OnLockAcquired / @OnLockLost methods on every provider and controller, like @Cron's explorer. */
@Injectable()
export class LockHandlersExplorer implements OnModuleInit {
  private readonly logger = new Logger(LockHandlersExplorer.name);
  acquired: LockHandler[] = [];
  lost: LockHandler[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    this.acquired = [];
    this.lost = [];
    const wrappers = [...this.discovery.getProviders(), ...this.discovery.getControllers()];
    for (const wrapper of wrappers) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      const prototype = Object.getPrototypeOf(instance);
      if (!prototype) continue;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const fn = instance[method];
        if (typeof fn !== 'function') continue;
        const name = `${instance.constructor?.name ?? 'provider'}.${method}`;
        const make = (options: LockHandlerOptions): LockHandler => ({
          name,
          lockName: options.lockName,
          invoke: async (event) => (fn as (e: unknown) => unknown).call(instance, event),
        });
        const onAcquired = this.reflector.get<LockHandlerOptions>(LOCK_ACQUIRED_HANDLER, fn);
        if (onAcquired) this.acquired.push(make(onAcquired));
        const onLost = this.reflector.get<LockHandlerOptions>(LOCK_LOST_HANDLER, fn);
        if (onLost) this.lost.push(make(onLost));
      }
    }
    if (this.acquired.length + this.lost.length > 0) {
      this.logger.debug(
        `Found ${this.acquired.length} @OnLockAcquired and ${this.lost.length} @OnLockLost handlers`,
      );
    }
  }

  /** Runs the handlers for a lock one after the other; a throwing handler is logged, not fatal. */
  async run(kind: 'acquired' | 'lost', lockName: string, event: unknown): Promise<void> {
    for (const handler of kind === 'acquired' ? this.acquired : this.lost) {
      if (handler.lockName !== undefined && handler.lockName !== lockName) continue;
      try {
        await handler.invoke(event);
      } catch (error) {
        this.logger.error(
          `@OnLock${kind === 'acquired' ? 'Acquired' : 'Lost'} handler ${handler.name} failed: ${String(error)}`,
        );
      }
    }
  }
}
