import { promises as fs } from 'node:fs';
import { join, resolve } from 'node:path';
import { v4 as uuidv4 } from 'uuid';
import { AbstractLocker } from './abstract.locker';
import type { LockerContext } from './locker.interface';
import { MtimeLock } from './mtime-lock';

/** Slack after the moment a lock file turns stale before a standby tries it (timer and stat jitter). */
const STALE_SLACK_MS = 20;

/**
 * The shared-file locker's mode 'mtime', for file systems without working OS locks: an exclusive
 * lock in a directory every instance shares that is not an OS lock, so ActiveMQ brokers do not see
 * it, and a crashed holder's lock is taken only once it is stale.
 *
 * The lock is a directory `<lockName>.lock` made with an atomic `mkdir`, whose mtime the holder
 * refreshes in milliseconds (MtimeLock); a lock not refreshed for `stale` ms is taken over (a
 * crashed holder), and the holder learns its lock was compromised when its mtime or inode
 * changes or it disappears behind its back. Next to it, `<lockName>.owner` names the holder
 * with a random token. `keepAlive` is false when the lock was compromised, when
 * `<lockName>.lock` is gone, or when the owner file was deleted, rewritten or touched.
 *
 * A standby retries every lockAcquireSleepInterval, or sooner: at the moment the lock it saw
 * turns stale, so a SIGKILLed master's lock is taken within `stale` (plus a few ms) of its last
 * refresh, whatever the interval.
 */
export class MtimeFileLocker extends AbstractLocker {
  lockPath!: string;
  ownerPath!: string;
  private stale = 10_000;
  private lock?: MtimeLock;
  private token?: string;
  private ownerMtimeMs = 0;
  /** Wall-clock time at which the lock seen by the last failed attempt turns stale. */
  private seenStaleAt?: number;
  private suspectedLoss?: () => void;

  /** Told the moment the refresh finds the lock compromised, so the master demotes at once. */
  onSuspectedLoss(listener: () => void): void {
    this.suspectedLoss = listener;
  }

  override async configure(context: LockerContext): Promise<void> {
    super.configure(context);
    const options = context.options;
    const directory = resolve(options.locker.directory ?? '.');
    await fs.mkdir(directory, { recursive: true });
    this.lockPath = join(directory, `${context.lock.name}.lock`);
    this.ownerPath = join(directory, `${context.lock.name}.owner`);
    this.stale = options.sharedFileStale;
    this.logger.log(
      `Lock '${context.lock.name}': shared-file locker in mode 'mtime' (lock directory ${this.lockPath}, ` +
        `refreshed by its holder, taken over ${this.stale} ms after its last refresh). ActiveMQ brokers ` +
        `do not see this lock; mode 'os' (the default) takes the OS file lock they take.`,
    );
    if (context.lock.keepAlivePeriod === 0) {
      this.logger.warn(
        `Lock '${context.lock.name}': lockKeepAlivePeriod is 0, so the master never checks its lock file. ` +
          `If anything else modifies or deletes ${this.lockPath} or ${this.ownerPath}, this master will not ` +
          `notice, a standby will take the lock at its next attempt, and two masters will run at once. ` +
          `Set lockKeepAlivePeriod (e.g. '10s') to detect it and demote.`,
      );
    }
  }

  /** The holder refreshes the mtime four times per `stale`. */
  private get update(): number {
    return Math.floor(this.stale / 4);
  }

  /** The master demotes this long before others may see its lock stale (clock and timer jitter). */
  private get margin(): number {
    return Math.min(2_000, Math.floor(this.stale / 4));
  }

  protected async tryAcquire(): Promise<boolean> {
    this.seenStaleAt = undefined;
    const result = await MtimeLock.tryAcquire({
      path: this.lockPath,
      stale: this.stale,
      update: this.update,
      timers: this.context.timers,
      timerName: `holdfast:locker:file-refresh:${this.context.lock.name}`,
      onCompromised: (error) => {
        const unnoticed = this.context.lock.keepAlivePeriod === 0;
        this.logger.error(
          `Lock file ${this.lockPath} compromised: ${error.message}` +
            (unnoticed ? ' (lockKeepAlivePeriod is 0: this master does not demote)' : ''),
        );
        this.suspectedLoss?.();
      },
    });
    if (!result.acquired) {
      this.seenStaleAt = result.staleAt;
      return false;
    }
    this.lock = result.lock;
    try {
      this.token = `${this.context.holder.id}\n${uuidv4()}\n`;
      await fs.writeFile(this.ownerPath, this.token);
      this.ownerMtimeMs = (await fs.stat(this.ownerPath)).mtimeMs;
    } catch (error) {
      await this.stop();
      throw error;
    }
    return true;
  }

  protected override nextAttemptDelay(failed: boolean): number {
    const delay = super.nextAttemptDelay(failed);
    if (this.seenStaleAt === undefined) return delay;
    return Math.min(delay, Math.max(0, this.seenStaleAt - Date.now()) + STALE_SLACK_MS);
  }

  async keepAlive(): Promise<boolean> {
    const lock = this.lock;
    if (!lock) return false;
    if (lock.compromised) return this.lost(lock.compromised.message);
    const [dir, owner, content] = await Promise.all([
      fs.stat(this.lockPath).catch(() => undefined),
      fs.stat(this.ownerPath).catch(() => undefined),
      fs.readFile(this.ownerPath, 'utf8').catch(() => undefined),
    ]);
    if (!dir?.isDirectory()) return this.lost(`${this.lockPath} was removed`);
    if (!owner || content === undefined) return this.lost(`${this.ownerPath} was removed`);
    if (content !== this.token || owner.mtimeMs !== this.ownerMtimeMs) {
      return this.lost(`${this.ownerPath} was modified by someone else`);
    }
    return true;
  }

  private lost(why: string): false {
    this.logger.warn(`Lock '${this.context.lock.name}' lost: ${why}`);
    return false;
  }

  /**
   * Others consider the lock stale `stale` ms after its last mtime refresh; this instance stops
   * trusting it `margin` earlier.
   */
  validUntil(): number {
    const lock = this.lock;
    return lock && !lock.compromised ? lock.lastRefresh + this.stale - this.margin : 0;
  }

  async stop(): Promise<void> {
    const lock = this.lock;
    this.lock = undefined;
    this.token = undefined;
    await lock?.release();
  }

  override async holder(): Promise<string | undefined> {
    const state = await MtimeLock.inspect(this.lockPath, this.stale).catch(() => undefined);
    if (!state || Date.now() >= state.staleAt) return undefined;
    const content = await fs.readFile(this.ownerPath, 'utf8').catch(() => undefined);
    return content?.split('\n')[0] || undefined;
  }
}
