import { HoldfastTimers, monotonicMillis } from '@holdfast/core/kit';
import { promises as fs, rmdirSync } from 'node:fs';
import { v4 as uuidv4 } from 'uuid';

export interface MtimeLockOptions {
  /** The lock directory (created with mkdir, which is atomic on local and network file systems). */
  path: string;
  /** A lock whose mtime is older than this (ms) is stale: its holder is gone, and it may be taken. */
  stale: number;
  /** How often the holder refreshes the mtime (ms); well below `stale`. */
  update: number;
  /** Called once when the lock stops being ours (removed, replaced or touched by someone else). */
  onCompromised(error: Error): void;
  /** Where the refresh timer is registered, and its name (default: own timers, the path). */
  timers?: HoldfastTimers;
  timerName?: string;
}

export type AcquireResult =
  | { acquired: true; lock: MtimeLock }
  /** `staleAt`: wall-clock ms at which the current lock turns stale unless its holder refreshes it. */
  | { acquired: false; staleAt?: number };

const held = new Set<MtimeLock>();
let exitHookInstalled = false;

/**
 * A lock directory whose mtime its holder keeps fresh, as proper-lockfile does, with the mtime
 * kept and compared in milliseconds: proper-lockfile stamps a new lock up to 1 s into the future
 * (its once-per-process precision probe) and rounds to the second on coarse file systems, which
 * delayed a takeover after SIGKILL by up to a second. Here the holder writes its own clock to
 * the millisecond and remembers what the file system stored (reading it back, so no float
 * round trip is compared); only on a file system that keeps whole seconds are times rounded up
 * (a lock never looks staler than it is).
 *
 * A stale lock is taken by renaming it away to a unique name first (atomic), so two standbys
 * that both saw it stale cannot both remove it: one rename wins, the other finds nothing.
 */
export class MtimeLock {
  /** Monotonic time at which the last successful refresh (or the acquire) was sent. */
  lastRefresh: number;
  compromised?: Error;
  private readonly timers: HoldfastTimers;
  private readonly timerName: string;
  private released = false;

  private constructor(
    private readonly options: MtimeLockOptions,
    private ino: number,
    private mtimeMs: number,
    private readonly wholeSeconds: boolean,
    sent: number,
  ) {
    this.lastRefresh = sent;
    this.timers = options.timers ?? new HoldfastTimers();
    this.timerName = options.timerName ?? `holdfast:locker:file-refresh:${options.path}`;
  }

  /** One attempt: takes the lock if it is free or stale. */
  static async tryAcquire(options: MtimeLockOptions): Promise<AcquireResult> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const sent = monotonicMillis();
      try {
        await fs.mkdir(options.path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const state = await MtimeLock.inspect(options.path, options.stale);
        if (state === undefined) continue; // released meanwhile: try again
        if (Date.now() < state.staleAt) return { acquired: false, staleAt: state.staleAt };
        if (!(await MtimeLock.removeStale(options))) return { acquired: false };
        continue;
      }
      return { acquired: true, lock: await MtimeLock.stamp(options, sent) };
    }
    return { acquired: false };
  }

  /** The lock's mtime and when it turns stale; undefined when there is no lock. */
  static async inspect(
    path: string,
    stale: number,
  ): Promise<{ mtimeMs: number; staleAt: number } | undefined> {
    try {
      const stat = await fs.stat(path);
      return { mtimeMs: stat.mtimeMs, staleAt: stat.mtimeMs + stale };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /** Removes a stale lock; false when it turned out not to be stale (or someone else removed it). */
  private static async removeStale(options: MtimeLockOptions): Promise<boolean> {
    const tombstone = `${options.path}.stale-${uuidv4()}`;
    try {
      await fs.rename(options.path, tombstone);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true; // someone else did
      throw error;
    }
    const moved = await fs.stat(tombstone);
    if (Date.now() < moved.mtimeMs + options.stale) {
      // Refreshed or re-created between our stat and our rename: give it back untouched if we can
      // (its holder sees its lock replaced otherwise, and demotes at its next refresh).
      await fs.rename(tombstone, options.path).catch(() => undefined);
      return false;
    }
    await fs.rm(tombstone, { recursive: true, force: true });
    return true;
  }

  private static async stamp(options: MtimeLockOptions, sent: number): Promise<MtimeLock> {
    try {
      let wrote = Date.now();
      await fs.utimes(options.path, wrote / 1000, wrote / 1000);
      let stat = await fs.stat(options.path);
      const wholeSeconds = Math.abs(stat.mtimeMs - wrote) >= 1 && stat.mtimeMs % 1000 === 0;
      if (wholeSeconds) {
        wrote = Math.ceil(wrote / 1000) * 1000;
        await fs.utimes(options.path, wrote / 1000, wrote / 1000);
        stat = await fs.stat(options.path);
      }
      const lock = new MtimeLock(options, stat.ino, stat.mtimeMs, wholeSeconds, sent);
      lock.hold();
      return lock;
    } catch (error) {
      await fs.rmdir(options.path).catch(() => undefined);
      throw error;
    }
  }

  private hold(): void {
    held.add(this);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      // A process that exits without stopping its locker (process.exit) frees its locks at once.
      process.once('exit', () => {
        for (const lock of held) {
          try {
            rmdirSync(lock.options.path);
          } catch {
            // already gone
          }
        }
      });
    }
    this.schedule(this.options.update);
  }

  private schedule(delay: number): void {
    this.timers.set(this.timerName, delay, () => void this.refresh());
  }

  private async refresh(): Promise<void> {
    if (this.released) return;
    const sent = monotonicMillis();
    try {
      const stat = await fs.stat(this.options.path);
      if (stat.ino !== this.ino || stat.mtimeMs !== this.mtimeMs) {
        this.compromise(`${this.options.path} was modified or replaced by someone else`);
        return;
      }
      const now = Date.now();
      const wrote = this.wholeSeconds ? Math.ceil(now / 1000) * 1000 : now;
      await fs.utimes(this.options.path, wrote / 1000, wrote / 1000);
      const after = await fs.stat(this.options.path);
      if (this.released) return;
      if (after.ino !== this.ino) {
        this.compromise(`${this.options.path} was replaced by someone else`);
        return;
      }
      this.mtimeMs = after.mtimeMs;
      this.lastRefresh = sent;
      this.schedule(this.options.update);
    } catch (error) {
      if (this.released) return;
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        this.compromise(`${this.options.path} was removed`);
      } else if (monotonicMillis() - this.lastRefresh >= this.options.stale) {
        this.compromise(
          `could not refresh ${this.options.path} within ${this.options.stale} ms: ${String(error)}`,
        );
      } else {
        // A transient file system error: try again soon, while the lock is not yet stale.
        this.schedule(Math.min(this.options.update, 250));
      }
    }
  }

  private compromise(why: string): void {
    this.compromised = new Error(why);
    this.released = true;
    held.delete(this);
    this.options.onCompromised(this.compromised);
  }

  /** Stops refreshing and removes the lock if it is still ours. */
  async release(): Promise<void> {
    const wasOurs = !this.released;
    this.released = true;
    this.timers.clear(this.timerName);
    held.delete(this);
    if (!wasOurs) return;
    const stat = await fs.stat(this.options.path).catch(() => undefined);
    if (stat?.ino === this.ino) await fs.rmdir(this.options.path).catch(() => undefined);
  }
}
