import type { Logger } from '@nestjs/common';
import { keepProcessAlive, monotonicMillis, OutageLog } from '@holdfast/core/kit';
import type { LockLostReason } from '../decorators/on-lock.decorators';
import type { Locker } from '../lock/locker.interface';
import type { LockerMetrics } from '../metrics/locker.metrics';
import type { ResolvedLockerOptions } from '../locker.options';
import type { LockHandlersExplorer } from '../explorer/lock-handlers.explorer';
import type { LockerTimers } from './locker-timers';
import { whileListeningForShutdown } from './shutdown-signals';
import { LockerStoppedError } from '../errors';

/** idle: not started; standby: waiting for the lock; master: holds it; stopped: shut down. */
export type LockerRole = 'idle' | 'standby' | 'master' | 'stopped';

/**
 * The master/standby state machine (ActiveMQ's LockableServiceSupport): waits for the lock,
 * keeps it alive every lockKeepAlivePeriod, demotes in-process when it is lost and goes back to
 * waiting, and releases it when stopped. Driven by LockerService.
 */
export class LockerStateMachine {
  /** The configured locker, set at module init (none without `useLock`). */
  locker?: Locker;
  role: LockerRole = 'idle';
  /** When the lock was last acquired or successfully kept alive. */
  lastKeepAlive?: Date;
  /** The last error talking to the lock store (cleared by a successful attempt or keep-alive). */
  lastError?: unknown;
  /** True until the first start has finished waiting (failIfLocked governs that one only). */
  firstStart = true;
  /** Bumped on every promotion and demotion, so callbacks of an earlier term do nothing. */
  private term = 0;
  private acquiring?: AbortController;
  /** The lock store's outages: one warning when one starts, one when it ends (shared with the locker). */
  readonly outage: OutageLog;
  /** Lets the process end again: a started locker holds it until stopped (see keepProcessAlive). */
  private releaseProcess?: () => void;

  constructor(
    private readonly options: ResolvedLockerOptions,
    private readonly handlers: LockHandlersExplorer,
    private readonly metrics: LockerMetrics,
    private readonly timers: LockerTimers,
    private readonly logger: Logger,
  ) {
    this.outage = new OutageLog(logger, `Lock '${options.lockName}'`);
  }

  get isMaster(): boolean {
    return this.role === 'master';
  }

  private get lockName(): string {
    return this.options.lockName;
  }

  private get instanceId(): string {
    return this.options.instanceId;
  }

  /** The locker suspects the lock is gone: a keep-alive now instead of at its time. */
  suspectedLoss(): void {
    if (!this.isMaster || this.options.lockKeepAlivePeriod === 0) return;
    this.timers.clearKeepAlive();
    void this.keepAlive(this.term);
  }

  /**
   * Starts waiting for the lock. With startup 'block' (or failIfLocked) it resolves once this
   * instance is master (or rejects with LockHeldError); with 'background' it returns at once.
   */
  async start(): Promise<void> {
    if (this.role === 'master' || this.role === 'standby') return;
    if (!this.options.useLock) {
      await this.promote();
      return;
    }
    this.role = 'standby';
    this.releaseProcess ??= keepProcessAlive(`locker (${this.lockName})`);
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
    if (this.role === 'stopped') return;
    const wasMaster = this.role === 'master';
    this.term++;
    this.role = 'stopped';
    this.acquiring?.abort(new LockerStoppedError());
    this.timers.clear();
    this.letProcessGo();
    if (wasMaster) {
      this.metrics.lost(this.lockName, 'stopped');
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

  private letProcessGo(): void {
    this.releaseProcess?.();
    this.releaseProcess = undefined;
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
      this.role = 'idle';
      this.letProcessGo();
      throw error;
    } finally {
      if (this.acquiring === abort) this.acquiring = undefined;
      this.firstStart = false;
    }
    if (this.role !== 'standby') {
      await locker.stop().catch(() => undefined);
      return;
    }
    this.metrics.waited(this.lockName, monotonicMillis() - since);
    await this.promote();
  }

  private async promote(): Promise<void> {
    const term = ++this.term;
    this.role = 'master';
    this.lastKeepAlive = new Date();
    this.lastError = undefined;
    this.metrics.acquired(this.lockName);
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
      this.lastKeepAlive = new Date();
      this.lastError = undefined;
      this.outage.succeeded();
      this.armWatchdog(term);
    } catch (error) {
      if (term !== this.term) return;
      this.lastError = error;
      this.metrics.keepAliveFailed(this.lockName);
      const left = (locker.validUntil?.() ?? 0) - monotonicMillis();
      if (left <= 0) {
        await this.demote(term, 'keep-alive-failed', error);
        return;
      }
      this.outage.failed(error, {
        during: 'a keep-alive',
        consequence: `still master for at most ${left} ms unless a keep-alive succeeds`,
      });
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
    if (term !== this.term || this.role !== 'master') return;
    this.term++;
    this.role = 'standby';
    // From here on, the acquire attempts report the store's health (AbstractLocker.lastError).
    this.lastError = undefined;
    this.timers.clear();
    this.metrics.lost(this.lockName, reason);
    // Within an outage already warned about, the loss is its expected consequence.
    this.logger[this.outage.ongoing ? 'log' : 'warn'](
      `Lost lock '${this.lockName}' (${reason}${error ? `: ${(error as Error).message ?? String(error)}` : ''}); demoting to standby`,
    );
    await this.handlers.run('lost', this.lockName, { lockName: this.lockName, reason, error });
    await this.locker!.stop().catch((e) => this.logger.debug(`Release after demotion failed: ${String(e)}`));
    if (this.role === 'standby') {
      this.acquire().catch((e) =>
        this.logger.error(`Waiting for lock '${this.lockName}' failed: ${String(e)}`),
      );
    }
  }
}
