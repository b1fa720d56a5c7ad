import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { discoverHandlers } from '@holdfast/core/kit';
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
  ) {}

  onModuleInit(): void {
    this.acquired = [];
    this.lost = [];
    const find = (key: string, decorator: string): LockHandler[] =>
      discoverHandlers<LockHandlerOptions>(this.discovery, this.scanner, key, decorator).map(
        ({ metadata, declaredOn, instance, method }) => ({
          name: declaredOn,
          lockName: metadata.lockName,
          invoke: async (event) => method.call(instance, event),
        }),
      );
    this.acquired = find(LOCK_ACQUIRED_HANDLER, '@OnLockAcquired()');
    this.lost = find(LOCK_LOST_HANDLER, '@OnLockLost()');
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
