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
import { DatabaseResolver, HoldfastError, monotonicMillis } from '@holdfast/core';
import type { LockLostReason } from '../decorators/on-lock.decorators';
import type { Locker } from '../lock/locker.interface';
import { LOCKER_OPTIONS } from '../locker.constants';
import { LockerMetrics } from '../metrics/locker.metrics';
import type { ResolvedLockerOptions } from '../options/locker.options';
import { LockHandlersExplorer } from './lock-handlers.explorer';
import { createLocker, lockerContext } from './locker-factory';
import { LockerTimers } from './locker-timers';
import { whileListeningForShutdown } from './shutdown-signals';

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
  /** keep-alive and watchdog timers, in the app's SchedulerRegistry (see README). */
  private readonly timers: LockerTimers;
  private readonly metrics = new LockerMetrics();
  private locker?: Locker;
  private _role: LockerRole = 'idle';
  /** Bumped on every promotion and demotion, so callbacks of an earlier term do nothing. */
  private term = 0;
  private acquiring?: AbortController;
  private firstStart = true;
  private _lastKeepAlive?: Date;
  private _holder?: string;
  private _lastError?: unknown;

  constructor(
    @Inject(LOCKER_OPTIONS) readonly options: ResolvedLockerOptions,
    private readonly moduleRef: ModuleRef,
    private readonly resolver: DatabaseResolver,
    private readonly handlers: LockHandlersExplorer,
    @Optional() registry?: SchedulerRegistry,
  ) {
    this.timers = new LockerTimers(options.lockName, registry);
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
    this.locker = await createLocker(this.options, this.moduleRef);
    await this.locker.configure?.(
      lockerContext({
        options: this.options,
        moduleRef: this.moduleRef,
        resolver: this.resolver,
        timers: this.timers.timers,
        firstStart: () => this.firstStart,
        loggerName: LockerService.name,
      }),
    );
    this.locker.onSuspectedLoss?.(() => {
      if (!this.isMaster || this.options.lockKeepAlivePeriod === 0) return;
      this.timers.clearKeepAlive();
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
    // A standby blocked in bootstrap must still shut down on a signal (bootstrap then completes
    // as a stopped standby and shutdown proceeds).
    if (this.options.startup === 'block')
      await whileListeningForShutdown(waiting, () => this.stop(), this.logger, `lock '${this.lockName}'`);
    else if (this.firstStart && this.options.failIfLocked) await waiting;
    else
      waiting.catch((error) =>
        this.logger.error(`Waiting for lock '${this.lockName}' failed: ${String(error)}`),
      );
  }

  /** Releases the lock (running @OnLockLost first if master) and stops waiting for it. */
  async stop(): Promise<void> {
    if (this._role === 'stopped') return;
    const wasMaster = this._role === 'master';
    this.term++;
    this._role = 'stopped';
    this.acquiring?.abort(new LockerStoppedError());
    this.timers.clear();
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
    this.timers.clearKeepAlive();
    // Every lockKeepAlivePeriod, but never later than halfway to the end of the lock's certain
    // validity, so a locker whose validity window is short (e.g. a small shared-file `stale`)
    // is renewed before the watchdog would demote it.
    const until = this.locker?.validUntil?.();
    const left = until === undefined || !Number.isFinite(until) ? Infinity : until - monotonicMillis();
    const delay = Math.max(50, Math.min(this.options.lockKeepAlivePeriod, left / 2));
    this.timers.setKeepAlive(delay, () => void this.keepAlive(term));
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
    this.timers.clearWatchdog();
    const deadline = this.locker?.validUntil?.();
    if (deadline === undefined || !Number.isFinite(deadline)) return;
    this.timers.setWatchdog(deadline - monotonicMillis(), () => {
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
    this.timers.clear();
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
}
