import { Logger } from '@nestjs/common';
import { OutageLog } from '@holdfast/core/kit';
import { LockHeldError } from '../errors';
import type { Locker, LockerContext } from './locker.interface';

/**
 * The acquire loop every built-in locker shares (ActiveMQ's `doStart` loops): one attempt,
 * then a sleep of lockAcquireSleepInterval, until `tryAcquire` succeeds or the signal aborts.
 * Extend it for a custom locker and implement `tryAcquire`, `keepAlive` and `stop`.
 */
export abstract class AbstractLocker implements Locker {
  protected context!: LockerContext;
  protected logger = new Logger(this.constructor.name);
  /** The error of the last acquire attempt, cleared by a successful attempt. */
  lastError?: unknown;
  private ownOutage?: OutageLog;

  /** The lock's outage log: the service's when it gave one, else this locker's own. */
  protected get outage(): OutageLog {
    return (this.context.lock.outage ??
      (this.ownOutage ??= new OutageLog(this.logger, `Lock '${this.context.lock.name}'`))) as OutageLog;
  }

  configure(context: LockerContext): void | Promise<void> {
    this.context = context;
  }

  /** One attempt: true when the lock is now ours. */
  protected abstract tryAcquire(): Promise<boolean>;
  abstract keepAlive(): Promise<boolean>;
  abstract stop(): Promise<void>;

  async holder(): Promise<string | undefined> {
    return undefined;
  }

  /**
   * How long to wait before the next attempt after one that did not acquire:
   * lockAcquireSleepInterval when the lock is held by another instance, a quarter of it when the
   * attempt failed (the store did not answer), so an instance is back within a fraction of the
   * interval once the store answers again instead of a whole one. A locker may wait less when it
   * knows the lock frees up sooner (a shared lock file that turns stale).
   */
  protected nextAttemptDelay(failed: boolean): number {
    const interval = this.context.lock.acquireSleepInterval;
    return failed ? Math.ceil(interval / 4) : interval;
  }

  async start(signal: AbortSignal): Promise<void> {
    const {
      name: lockName,
      failIfLocked,
      acquireSleepInterval: lockAcquireSleepInterval,
    } = this.context.lock;
    let reported = false;
    for (;;) {
      signal.throwIfAborted();
      let acquired = false;
      try {
        acquired = await this.tryAcquire();
        this.outage.succeeded();
        this.lastError = undefined;
      } catch (error) {
        if (failIfLocked) throw error;
        this.outage.failed(error, { during: 'an acquire attempt', consequence: 'waiting as standby' });
        this.lastError = error;
      }
      if (acquired) {
        if (signal.aborted) {
          await this.stop();
          signal.throwIfAborted();
        }
        return;
      }
      if (failIfLocked) {
        throw new LockHeldError(lockName, await this.holder().catch(() => undefined));
      }
      if (!reported && this.lastError === undefined) {
        reported = true;
        const holder = await this.holder().catch(() => undefined);
        this.logger.log(
          `Lock '${lockName}' is held by ${holder ?? 'another instance'}; waiting as standby, retrying every ${lockAcquireSleepInterval} ms`,
        );
      }
      await this.context.timers.sleep(
        `holdfast:locker:acquire:${lockName}`,
        Math.min(lockAcquireSleepInterval, this.nextAttemptDelay(this.lastError !== undefined)),
        signal,
      );
    }
  }
}
