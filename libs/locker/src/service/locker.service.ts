import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  OnModuleInit,
  Optional,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { SchedulerRegistry } from '@nestjs/schedule';
import {
  DatabaseResolver,
  HoldfastError,
  HoldfastTimers,
  monotonicMillis,
  resolveDataSource,
  sqlClientFor,
  type SqlClient,
} from '@holdfast/core';
import type { DataSource } from 'typeorm';
import type { LockLostReason } from '../decorators/on-lock.decorators';
import { InvalidLockerError } from '../errors';
import { DatabaseLocker } from '../lock/database.locker';
import { LeaseDatabaseLocker } from '../lock/lease-database.locker';
import type { Locker, LockerContext } from '../lock/locker.interface';
import { SharedFileLocker } from '../lock/shared-file.locker';
import { LOCKER_OPTIONS } from '../locker.constants';
import { LockerMetrics } from '../metrics/locker.metrics';
import type { ResolvedLockerOptions } from '../options/locker.options';
import { LockHandlersExplorer } from './lock-handlers.explorer';

/** idle: not started; standby: waiting for the lock; master: holds it; stopped: shut down. */
export type LockerRole = 'idle' | 'standby' | 'master' | 'stopped';

class LockerStoppedError extends HoldfastError {
  constructor() {
    super('The locker was stopped while waiting for the lock', 'HOLDFAST_LOCKER_STOPPED');
  }
}

/**
 * Master/standby for the whole service (ActiveMQ's LockableServiceSupport): waits for the lock,
 * keeps it alive every lockKeepAlivePeriod, demotes in-process when it is lost and goes back to
 * waiting, and releases it on shutdown so a standby takes over within one lockAcquireSleepInterval.
 */
@Injectable()
export class LockerService
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  private readonly logger = new Logger(LockerService.name);
  /** keep-alive, watchdog and acquire timers, in the app's SchedulerRegistry (see README). */
  private readonly timers: HoldfastTimers;
  private readonly metrics = new LockerMetrics();
  private locker?: Locker;
  private database?: { dataSource: DataSource; sql: SqlClient };
  private _role: LockerRole = 'idle';
  /** Bumped on every promotion and demotion, so callbacks of an earlier term do nothing. */
  private term = 0;
  private acquiring?: AbortController;
  private firstStart = true;
  private _lastKeepAlive?: Date;
  private _holder?: string;
  private _lastError?: unknown;
  private readonly keepAliveName: string;
  private readonly watchdogName: string;

  constructor(
    @Inject(LOCKER_OPTIONS) readonly options: ResolvedLockerOptions,
    private readonly moduleRef: ModuleRef,
    private readonly resolver: DatabaseResolver,
    private readonly handlers: LockHandlersExplorer,
    @Optional() registry?: SchedulerRegistry,
  ) {
    // Without ScheduleModule in the app, HoldfastTimers keeps the same bookkeeping itself.
    this.timers = new HoldfastTimers(registry);
    this.keepAliveName = `holdfast:locker:keep-alive:${options.lockName}`;
    this.watchdogName = `holdfast:locker:watchdog:${options.lockName}`;
    this.metrics.observeRole(options.lockName, () => this.isMaster);
  }

  /** True while this instance holds the lock and may do master work. */
  get isMaster(): boolean {
    return this._role === 'master';
  }

  get role(): LockerRole {
    return this._role;
  }

  /** The holder as last known: this instance while master, else the last holder read (see readHolder). */
  get holder(): string | undefined {
    return this.isMaster ? this.options.instanceId : this._holder;
  }

  /** When the lock was last acquired or successfully kept alive. */
  get lastKeepAlive(): Date | undefined {
    return this._lastKeepAlive;
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
    return this._lastError ?? (this.locker as { lastError?: unknown } | undefined)?.lastError;
  }

  /** Asks the store who holds the lock now (undefined: free, or the locker cannot tell). */
  async readHolder(): Promise<string | undefined> {
    if (this.isMaster) return this.options.instanceId;
    this._holder = await this.locker?.holder?.();
    return this._holder;
  }

  async onModuleInit(): Promise<void> {
    if (!this.options.useLock) return;
    this.locker = await this.createLocker();
    await this.locker.configure?.(this.context());
    this.locker.onSuspectedLoss?.(() => {
      if (!this.isMaster || this.options.lockKeepAlivePeriod === 0) return;
      this.deleteKeepAliveTimer();
      void this.keepAlive(this.term);
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.locker?.dispose?.().catch(() => undefined);
  }

  /**
   * Starts waiting for the lock. With startup 'block' (or failIfLocked) it resolves once this
   * instance is master (or rejects with LockHeldError); with 'background' it returns at once.
   */
  async start(): Promise<void> {
    if (this._role === 'master' || this._role === 'standby') return;
    if (!this.options.useLock) {
      await this.promote();
      return;
    }
    this._role = 'standby';
    const waiting = this.acquire();
    if (this.options.startup === 'block') await this.whileListeningForShutdown(waiting);
    else if (this.firstStart && this.options.failIfLocked) await waiting;
    else
      waiting.catch((error) =>
        this.logger.error(`Waiting for lock '${this.lockName}' failed: ${String(error)}`),
      );
  }

  /**
   * A standby blocked in bootstrap must still shut down on a signal: Nest's shutdown hooks wait
   * for bootstrap to finish first, so a signal stops the waiting (bootstrap then completes as a
   * stopped standby and shutdown proceeds). When nothing else handles the signal, it is raised
   * again so the default (exit) still happens.
   */
  private async whileListeningForShutdown(waiting: Promise<void>): Promise<void> {
    const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];
    const onSignal = (signal: NodeJS.Signals) => {
      signals.forEach((s) => process.removeListener(s, onSignal));
      this.logger.log(`${signal} while waiting for lock '${this.lockName}': no longer waiting`);
      void this.stop().then(() => {
        if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
      });
    };
    signals.forEach((s) => process.once(s, onSignal));
    try {
      await waiting;
    } finally {
      signals.forEach((s) => process.removeListener(s, onSignal));
    }
  }

  /** Releases the lock (running @OnLockLost first if master) and stops waiting for it. */
  async stop(): Promise<void> {
    if (this._role === 'stopped') return;
    const wasMaster = this._role === 'master';
    this.term++;
    this._role = 'stopped';
    this.acquiring?.abort(new LockerStoppedError());
    this.clearTimers();
    if (wasMaster) {
      this.metrics.lost.add(1, { lock: this.lockName, reason: 'stopped' });
      await this.handlers.run('lost', this.lockName, { lockName: this.lockName, reason: 'stopped' });
    }
    try {
      await this.locker?.stop();
      if (wasMaster) this.logger.log(`Released lock '${this.lockName}'`);
    } catch (error) {
      this.logger.warn(
        `Releasing lock '${this.lockName}' failed (it will lapse by itself): ${String(error)}`,
      );
    }
  }

  private async acquire(): Promise<void> {
    const locker = this.locker!;
    const abort = new AbortController();
    this.acquiring = abort;
    const since = monotonicMillis();
    try {
      await locker.start(abort.signal);
    } catch (error) {
      if (abort.signal.aborted) return;
      this._role = 'idle';
      throw error;
    } finally {
      if (this.acquiring === abort) this.acquiring = undefined;
      this.firstStart = false;
    }
    if (this._role !== 'standby') {
      await locker.stop().catch(() => undefined);
      return;
    }
    this.metrics.acquireWait.record(monotonicMillis() - since, { lock: this.lockName });
    await this.promote();
  }

  private async promote(): Promise<void> {
    const term = ++this.term;
    this._role = 'master';
    this._lastKeepAlive = new Date();
    this._lastError = undefined;
    this.metrics.acquired.add(1, { lock: this.lockName });
    this.logger.log(`Acquired lock '${this.lockName}' as ${this.instanceId}: this instance is master`);
    // lockKeepAlivePeriod 0 (database, shared-file): no keep-alive, as in ActiveMQ; master until
    // stopped. Without keep-alives there is nothing to renew the validity, so no watchdog either.
    if (this.locker && this.options.lockKeepAlivePeriod > 0) {
      this.armWatchdog(term);
      this.scheduleKeepAlive(term);
    }
    await this.handlers.run('acquired', this.lockName, { lockName: this.lockName, holder: this.instanceId });
  }

  private scheduleKeepAlive(term: number): void {
    this.deleteKeepAliveTimer();
    // Every lockKeepAlivePeriod, but never later than halfway to the end of the lock's certain
    // validity, so a locker whose validity window is short (e.g. a small shared-file `stale`)
    // is renewed before the watchdog would demote it.
    const until = this.locker?.validUntil?.();
    const left = until === undefined || !Number.isFinite(until) ? Infinity : until - monotonicMillis();
    const delay = Math.max(50, Math.min(this.options.lockKeepAlivePeriod, left / 2));
    this.timers.set(this.keepAliveName, delay, () => void this.keepAlive(term));
  }

  private async keepAlive(term: number): Promise<void> {
    if (term !== this.term) return;
    const locker = this.locker!;
    try {
      const alive = await locker.keepAlive();
      if (term !== this.term) return;
      if (!alive) {
        await this.demote(term, 'keep-alive-false');
        return;
      }
      this._lastKeepAlive = new Date();
      this._lastError = undefined;
      this.armWatchdog(term);
    } catch (error) {
      if (term !== this.term) return;
      this._lastError = error;
      this.metrics.keepAliveFailures.add(1, { lock: this.lockName });
      const left = (locker.validUntil?.() ?? 0) - monotonicMillis();
      if (left <= 0) {
        await this.demote(term, 'keep-alive-failed', error);
        return;
      }
      this.logger.warn(
        `Keep-alive of lock '${this.lockName}' failed: ${String(error)}. Still master for at most ${left} ms unless one succeeds.`,
      );
    }
    this.scheduleKeepAlive(term);
  }

  /**
   * Demotes when the lock's certain validity runs out without a successful keep-alive, even if
   * the keep-alive call itself hangs (a silent network partition).
   */
  private armWatchdog(term: number): void {
    this.timers.clear(this.watchdogName);
    const deadline = this.locker?.validUntil?.();
    if (deadline === undefined || !Number.isFinite(deadline)) return;
    this.timers.set(this.watchdogName, deadline - monotonicMillis(), () => {
      if (term !== this.term) return;
      if (monotonicMillis() >= (this.locker?.validUntil?.() ?? 0)) {
        void this.demote(
          term,
          'keep-alive-failed',
          new Error('the lock validity ran out without a successful keep-alive'),
        );
      } else {
        this.armWatchdog(term);
      }
    });
  }

  private async demote(term: number, reason: LockLostReason, error?: unknown): Promise<void> {
    if (term !== this.term || this._role !== 'master') return;
    this.term++;
    this._role = 'standby';
    // From here on, the acquire attempts report the store's health (AbstractLocker.lastError).
    this._lastError = undefined;
    this.clearTimers();
    this.metrics.lost.add(1, { lock: this.lockName, reason });
    this.logger.warn(
      `Lost lock '${this.lockName}' (${reason}${error ? `: ${String(error)}` : ''}); demoting to standby`,
    );
    await this.handlers.run('lost', this.lockName, { lockName: this.lockName, reason, error });
    await this.locker!.stop().catch((e) => this.logger.debug(`Release after demotion failed: ${String(e)}`));
    if (this._role === 'standby') {
      this.acquire().catch((e) =>
        this.logger.error(`Waiting for lock '${this.lockName}' failed: ${String(e)}`),
      );
    }
  }

  private deleteKeepAliveTimer(): void {
    this.timers.clear(this.keepAliveName);
  }

  private clearTimers(): void {
    this.deleteKeepAliveTimer();
    this.timers.clear(this.watchdogName);
  }

  private async createLocker(): Promise<Locker> {
    const kind = this.options.locker;
    switch (kind.type) {
      case 'lease-database':
        return new LeaseDatabaseLocker();
      case 'database':
        return new DatabaseLocker();
      case 'shared-file':
        return new SharedFileLocker();
      case 'custom': {
        const locker = await this.moduleRef.create(kind.useClass);
        const candidate = locker as Partial<Locker>;
        if (
          typeof candidate.start !== 'function' ||
          typeof candidate.stop !== 'function' ||
          typeof candidate.keepAlive !== 'function'
        ) {
          throw new InvalidLockerError(kind.useClass);
        }
        return locker;
      }
    }
  }

  private context(): LockerContext {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const service = this;
    const options = this.options;
    return {
      options,
      lockName: options.lockName,
      holderId: options.instanceId,
      lockAcquireSleepInterval: options.lockAcquireSleepInterval,
      lockKeepAlivePeriod: options.lockKeepAlivePeriod,
      // failIfLocked governs the first start only; after a demotion the instance waits as standby.
      get failIfLocked() {
        return service.firstStart && options.failIfLocked;
      },
      database: () => {
        if (!service.database) {
          const dataSource = resolveDataSource(service.moduleRef, options.dataSource, 'LockerModule');
          service.database = { dataSource, sql: sqlClientFor(dataSource, service.resolver, options.dialect) };
        }
        return service.database;
      },
      logger: new Logger(LockerService.name),
      timers: this.timers,
    };
  }
}
