import { HoldfastTimers, type TimeoutRegistry } from '@holdfast/core/kit';

/**
 * The locker's two timers, keep-alive and watchdog, named per lock in the app's
 * SchedulerRegistry (`holdfast:locker:keep-alive:<lock>`, `holdfast:locker:watchdog:<lock>`);
 * without ScheduleModule in the app, HoldfastTimers keeps the same bookkeeping itself. The
 * registry comes from core's `findSchedulerRegistry` (the one way Simba and the locker find it),
 * given at module init (`useRegistry`), before any timer is set.
 */
export class LockerTimers {
  private current = new HoldfastTimers();
  private readonly keepAliveName: string;
  private readonly watchdogName: string;

  constructor(lockName: string) {
    this.keepAliveName = `holdfast:locker:keep-alive:${lockName}`;
    this.watchdogName = `holdfast:locker:watchdog:${lockName}`;
  }

  /** The timers, in the application's SchedulerRegistry once `useRegistry` found one. */
  get timers(): HoldfastTimers {
    return this.current;
  }

  /** Puts the timers in `registry` (the app's SchedulerRegistry; undefined: none). Call before setting any. */
  useRegistry(registry: TimeoutRegistry | undefined): void {
    this.current = new HoldfastTimers(registry);
  }

  setKeepAlive(delay: number, run: () => void): void {
    this.timers.set(this.keepAliveName, delay, run);
  }

  clearKeepAlive(): void {
    this.timers.clear(this.keepAliveName);
  }

  setWatchdog(delay: number, run: () => void): void {
    this.timers.set(this.watchdogName, delay, run);
  }

  clearWatchdog(): void {
    this.timers.clear(this.watchdogName);
  }

  clear(): void {
    this.clearKeepAlive();
    this.clearWatchdog();
  }
}
