import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { findSchedulerRegistry } from '@holdfast/core/kit';
import { LOCKER_OPTIONS } from '../locker.tokens';
import { LockerMetrics } from '../metrics/locker.metrics';
import type { ResolvedLockerOptions } from '../locker.options';
import { LockHandlersExplorer } from '../explorer/lock-handlers.explorer';
import { LockerDatabase } from './locker-database';
import { createLocker, lockerContext } from './locker-factory';
import { LockerStateMachine, type LockerRole } from './locker-state-machine';
import { LockerTimers } from './locker-timers';

export type { LockerRole } from './locker-state-machine';

/**
 * Master/standby for the whole service (ActiveMQ's LockableServiceSupport): builds the configured
 * locker at module init, starts its {@link LockerStateMachine} at bootstrap and stops it before
 * shutdown, so a standby takes over within one lockAcquireSleepInterval.
 */
@Injectable()
export class LockerService
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  private readonly logger = new Logger(LockerService.name);
  /** keep-alive and watchdog timers, in the app's SchedulerRegistry (see README). */
  private readonly timers: LockerTimers;
  private readonly metrics = new LockerMetrics();
  private readonly machine: LockerStateMachine;
  private _holder?: string;

  constructor(
    @Inject(LOCKER_OPTIONS) readonly options: ResolvedLockerOptions,
    private readonly moduleRef: ModuleRef,
    private readonly database: LockerDatabase,
    handlers: LockHandlersExplorer,
  ) {
    this.timers = new LockerTimers(options.lockName);
    this.machine = new LockerStateMachine(options, handlers, this.metrics, this.timers, this.logger);
    this.metrics.observeRole(options.lockName, () => this.isMaster);
    // Only a lock that takes keep-alives (lockKeepAlivePeriod > 0) has an age worth alerting on.
    this.metrics.observeKeepAlive(options.lockName, () =>
      this.isMaster && options.useLock && options.lockKeepAlivePeriod > 0
        ? this.machine.lastKeepAlive?.getTime()
        : undefined,
    );
  }

  /** True while this instance holds the lock and may do master work. */
  get isMaster(): boolean {
    return this.machine.isMaster;
  }

  get role(): LockerRole {
    return this.machine.role;
  }

  /** The holder as last known: this instance while master, else the last holder read (see readHolder). */
  get holder(): string | undefined {
    return this.isMaster ? this.options.instanceId : this._holder;
  }

  /** When the lock was last acquired or successfully kept alive. */
  get lastKeepAlive(): Date | undefined {
    return this.machine.lastKeepAlive;
  }

  get lockName(): string {
    return this.options.lockName;
  }

  /** This instance's name in the lock store. */
  get instanceId(): string {
    return this.options.instanceId;
  }

  /** The last error talking to the lock store (cleared by a successful attempt or keep-alive). */
  get lastError(): unknown {
    return this.machine.lastError ?? (this.machine.locker as { lastError?: unknown } | undefined)?.lastError;
  }

  /** Asks the store who holds the lock now (undefined: free, or the locker cannot tell). */
  async readHolder(): Promise<string | undefined> {
    if (this.isMaster) return this.options.instanceId;
    this._holder = await this.machine.locker?.holder?.();
    return this._holder;
  }

  async onModuleInit(): Promise<void> {
    // The app's SchedulerRegistry, found as Simba finds it (core's one helper).
    this.timers.useRegistry(findSchedulerRegistry(this.moduleRef));
    if (!this.options.useLock) return;
    const locker = await createLocker(this.options, this.moduleRef);
    this.machine.locker = locker;
    await locker.configure?.(
      lockerContext({
        options: this.options,
        database: this.database,
        timers: this.timers.timers,
        firstStart: () => this.machine.firstStart,
        loggerName: LockerService.name,
        outage: this.machine.outage,
      }),
    );
    locker.onSuspectedLoss?.(() => this.machine.suspectedLoss());
  }

  async onApplicationBootstrap(): Promise<void> {
    // Holdfast's connections first (ConnectionBudget): an instance the server has no room for
    // never contends for the lock.
    const type = this.options.locker.type;
    if (this.options.useLock && (type === 'lease-database' || type === 'database'))
      await this.database.admitted();
    await this.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.machine.locker?.dispose?.().catch(() => undefined);
  }

  /**
   * Starts waiting for the lock. With startup 'block' (or failIfLocked) it resolves once this
   * instance is master (or rejects with LockHeldError); with 'background' it returns at once.
   */
  start(): Promise<void> {
    return this.machine.start();
  }

  /** Releases the lock (running @OnLockLost first if master) and stops waiting for it. */
  stop(): Promise<void> {
    return this.machine.stop();
  }
}
