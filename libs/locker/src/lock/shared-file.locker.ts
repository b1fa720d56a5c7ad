import { monotonicMillis } from '@holdfast/core';
import { promises as fs } from 'node:fs';
import { join, resolve } from 'node:path';
import * as lockfile from 'proper-lockfile';
import { v4 as uuidv4 } from 'uuid';
import { AbstractLocker } from './abstract.locker';
import type { LockerContext } from './locker.interface';

/**
 * ActiveMQ's SharedFileLocker: an exclusive lock in a directory every instance shares.
 *
 * The lock itself is proper-lockfile's: an atomic `mkdir` of `<lockName>.lock`, whose mtime the
 * holder refreshes; a lock not refreshed for `stale` ms is taken over (a crashed holder), and
 * proper-lockfile reports the lock compromised when its mtime changes or it disappears behind
 * the holder's back. Next to it, `<lockName>.owner` names the holder with a random token.
 * `keepAlive` is false when the lock was reported compromised, when `<lockName>.lock` is gone,
 * or when the owner file was deleted, rewritten or touched.
 */
export class SharedFileLocker extends AbstractLocker {
  lockPath!: string;
  ownerPath!: string;
  private stale = 10_000;
  private release?: () => Promise<void>;
  private compromised?: Error;
  private token?: string;
  private ownerMtimeMs = 0;
  private lastGood = 0;

  override async configure(context: LockerContext): Promise<void> {
    super.configure(context);
    const options = context.options;
    const directory = resolve(options.locker.type === 'shared-file' ? options.locker.directory : '.');
    await fs.mkdir(directory, { recursive: true });
    this.lockPath = join(directory, `${context.lockName}.lock`);
    this.ownerPath = join(directory, `${context.lockName}.owner`);
    this.stale = options.sharedFileStale;
    if (context.lockKeepAlivePeriod === 0) {
      this.logger.warn(
        `Lock '${context.lockName}': lockKeepAlivePeriod is 0, so the master never checks its lock file. ` +
          `If anything else modifies or deletes ${this.lockPath} or ${this.ownerPath}, this master will not ` +
          `notice, a standby will take the lock at its next attempt, and two masters will run at once. ` +
          `Set lockKeepAlivePeriod (e.g. '10s') to detect it and demote.`,
      );
    }
  }

  /** proper-lockfile refreshes the lock's mtime every `update` ms; stale after `stale` ms. */
  private get update(): number {
    const keepAlive = this.context.lockKeepAlivePeriod || this.stale / 2;
    return Math.max(1_000, Math.min(keepAlive, this.stale / 2));
  }

  protected async tryAcquire(): Promise<boolean> {
    const started = monotonicMillis();
    this.compromised = undefined;
    try {
      this.release = await lockfile.lock(this.ownerPath, {
        lockfilePath: this.lockPath,
        realpath: false,
        retries: 0,
        stale: this.stale,
        update: this.update,
        onCompromised: (error) => {
          // Never throw here: proper-lockfile would throw from a timer and crash the process.
          this.compromised = error;
          this.logger.error(`Lock file ${this.lockPath} compromised: ${error.message}`);
        },
      });
    } catch (error) {
      if ((error as { code?: string }).code === 'ELOCKED') return false;
      throw error;
    }
    try {
      this.token = `${this.context.holderId}\n${uuidv4()}\n`;
      await fs.writeFile(this.ownerPath, this.token);
      this.ownerMtimeMs = (await fs.stat(this.ownerPath)).mtimeMs;
    } catch (error) {
      await this.stop();
      throw error;
    }
    this.lastGood = started;
    return true;
  }

  async keepAlive(): Promise<boolean> {
    const started = monotonicMillis();
    if (!this.release || this.compromised) return false;
    const [lock, owner, content] = await Promise.all([
      fs.stat(this.lockPath).catch(() => undefined),
      fs.stat(this.ownerPath).catch(() => undefined),
      fs.readFile(this.ownerPath, 'utf8').catch(() => undefined),
    ]);
    if (!lock?.isDirectory()) return this.lost(`${this.lockPath} was removed`);
    if (!owner || content === undefined) return this.lost(`${this.ownerPath} was removed`);
    if (content !== this.token || owner.mtimeMs !== this.ownerMtimeMs) {
      return this.lost(`${this.ownerPath} was modified by someone else`);
    }
    this.lastGood = started;
    return true;
  }

  private lost(why: string): false {
    this.logger.warn(`Lock '${this.context.lockName}' lost: ${why}`);
    return false;
  }

  /**
   * Other instances consider the lock stale `stale` ms after its last mtime refresh, which
   * happened at most `update` ms before the last good keep-alive.
   */
  validUntil(): number {
    return this.release && !this.compromised ? this.lastGood + this.stale - this.update : 0;
  }

  async stop(): Promise<void> {
    const release = this.release;
    this.release = undefined;
    this.token = undefined;
    if (!release) return;
    try {
      await release();
    } catch {
      // Already compromised or removed: nothing of ours is left to release.
    }
  }

  override async holder(): Promise<string | undefined> {
    const locked = await lockfile
      .check(this.ownerPath, { lockfilePath: this.lockPath, realpath: false, stale: this.stale })
      .catch(() => false);
    if (!locked) return undefined;
    const content = await fs.readFile(this.ownerPath, 'utf8').catch(() => undefined);
    return content?.split('\n')[0] || undefined;
  }
}
