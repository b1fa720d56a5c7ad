import type { SchedulerRegistry } from '@nestjs/schedule';
import { HoldfastTimers } from '@holdfast/core/kit';

/**
 * The locker's two timers, keep-alive and watchdog, named per lock in the app's
 * SchedulerRegistry (`holdfast:locker:keep-alive:<lock>`, `holdfast:locker:watchdog:<lock>`);
 * without ScheduleModule in the app, HoldfastTimers keeps the same bookkeeping itself.
 */
export class LockerTimers {
  readonly timers: HoldfastTimers;
  private readonly keepAliveName: string;
  private readonly watchdogName: string;

  constructor(lockName: string, registry?: SchedulerRegistry) {
    this.timers = new HoldfastTimers(registry);
    this.keepAliveName = `holdfast:locker:keep-alive:${lockName}`;
    this.watchdogName = `holdfast:locker:watchdog:${lockName}`;
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
