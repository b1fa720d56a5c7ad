import { promises as fs, readFileSync, type Stats } from 'node:fs';
import { hostname } from 'node:os';
import { isHeldElsewhere, type NativeFileLock } from './native-file-lock';

/**
 * One lock file as this process uses it. A POSIX record lock belongs to the process, not to a
 * descriptor: two lockers of one process would both "get" it, and closing any descriptor of the
 * file (a second `open` + `close`, e.g. `fs.readFile` of it) silently drops it. So the process
 * keeps one descriptor per lock file, every read and write of the file goes through it, it is
 * closed only when no locker of the process uses the file any more, and one locker at a time
 * holds the lock in this process (the others of the process see it held, as another process would).
 * Every step runs in one queue per file, so an open, a lock and a close never interleave.
 */
export class ProcessFileLock {
  private static readonly files = new Map<string, ProcessFileLock>();

  private handle?: fs.FileHandle;
  private stats?: Stats;
  private holder?: { token: symbol; holderId: string };
  private readonly users = new Map<symbol, string>();
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly path: string,
    private readonly native: NativeFileLock,
  ) {}

  /** The process's one entry for `path` (an absolute, resolved path). */
  static for(path: string, native: NativeFileLock): ProcessFileLock {
    let entry = ProcessFileLock.files.get(path);
    if (!entry) {
      entry = new ProcessFileLock(path, native);
      ProcessFileLock.files.set(path, entry);
    }
    return entry;
  }

  /** Registers a locker (by its token) and the lock name it uses; returns another lock name already on this file. */
  attach(token: symbol, lockName: string): string | undefined {
    const other = [...this.users.values()].find((name) => name !== lockName);
    if (other === undefined) this.users.set(token, lockName);
    return other;
  }

  /** Unregisters a locker; the descriptor is closed once no locker of the process uses the file. */
  detach(token: symbol): Promise<void> {
    return this.serial(async () => {
      this.users.delete(token);
      if (this.users.size > 0 || this.holder) return;
      ProcessFileLock.files.delete(this.path);
      await this.close();
    });
  }

  /** The holder id of the locker of this process that holds the lock, if one does. */
  get heldInProcessBy(): string | undefined {
    return this.holder?.holderId;
  }

  /**
   * Takes and gives back the lock once, to learn at startup whether the file system can lock at all
   * (throws the errno error when it cannot). Skipped while a locker of this process holds it.
   */
  probe(): Promise<void> {
    return this.serial(async () => {
      if (this.holder) return;
      const handle = await this.open();
      try {
        await this.native.lock(handle.fd, 0, 0, { exclusive: true, immediate: true });
      } catch (error) {
        if (isHeldElsewhere(error)) return;
        throw error;
      }
      await this.native.unlock(handle.fd, 0, 0);
    });
  }

  /**
   * One non-blocking attempt. `held`: another locker of this process or another process holds it.
   * `replaced`: the file was removed or replaced under the attempt (ActiveMQ deletes its lock
   * file when it stops), so the lock taken was on a file nobody else opens any more: given back.
   */
  tryLock(token: symbol, holderId: string): Promise<'acquired' | 'held' | 'replaced'> {
    return this.serial(async () => {
      if (this.holder) return this.holder.token === token ? 'acquired' : 'held';
      const handle = await this.open();
      try {
        await this.native.lock(handle.fd, 0, 0, { exclusive: true, immediate: true });
      } catch (error) {
        if (isHeldElsewhere(error)) return 'held';
        throw error;
      }
      if (!(await this.sameFile())) {
        await this.native.unlock(handle.fd, 0, 0).catch(() => undefined);
        await this.close();
        return 'replaced';
      }
      this.holder = { token, holderId };
      // Who holds it, for standbys' logs (ActiveMQ writes nothing into its lock file).
      const owner = Buffer.from(`holdfast ${holderId} pid=${process.pid} host=${hostname()}\n`);
      await handle.truncate(0).catch(() => undefined);
      await handle.write(owner, 0, owner.length, 0).catch(() => undefined);
      return 'acquired';
    });
  }

  /**
   * Whether `token` still holds the lock: its file is still the one at the path, and asking the
   * kernel again for the lock succeeds (a no-op while this process holds it; refused when the lock
   * was dropped behind the locker's back and another process took it).
   */
  check(token: symbol): Promise<string | undefined> {
    return this.serial(async () => {
      if (this.holder?.token !== token || !this.handle) return 'the lock was released';
      if (!(await this.sameFile())) return `${this.path} was removed or replaced by someone else`;
      try {
        await this.native.lock(this.handle.fd, 0, 0, { exclusive: true, immediate: true });
      } catch (error) {
        if (isHeldElsewhere(error)) {
          return `another process holds ${this.path} (a descriptor of it was closed in this process, which drops a POSIX lock)`;
        }
        throw error;
      }
      return undefined;
    });
  }

  /** Releases the lock if `token` holds it (the holder line is cleared first). */
  release(token: symbol): Promise<void> {
    return this.serial(async () => {
      if (this.holder?.token !== token) return;
      this.holder = undefined;
      const handle = this.handle;
      if (!handle) return;
      await handle.truncate(0).catch(() => undefined);
      try {
        await this.native.unlock(handle.fd, 0, 0);
      } catch {
        // Closing the descriptor drops the process's locks on the file for certain.
        await this.close();
      }
      if (this.users.size === 0) {
        ProcessFileLock.files.delete(this.path);
        await this.close();
      }
    });
  }

  /**
   * Who holds the lock as far as this host can tell: the locker of this process; else the process
   * the kernel names (/proc/locks), by the holder line it wrote when it is Holdfast; else the
   * holder line as last written (a holder on another host of a network file system).
   */
  whoHolds(): Promise<string | undefined> {
    return this.serial(async () => {
      if (this.holder) return this.holder.holderId;
      const handle = await this.open();
      const buffer = Buffer.alloc(1024);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      const line = /^holdfast (\S+) pid=(\d+) host=(\S+)\n/.exec(
        buffer.subarray(0, bytesRead).toString('utf8'),
      );
      const pid = this.stats ? lockHolderPid(this.stats) : undefined;
      if (pid === undefined) return line?.[1];
      if (line && Number(line[2]) === pid && line[3] === hostname()) return line[1];
      return `pid ${pid}${processName(pid)}`;
    });
  }

  /** Opens the file (creating it) unless the open descriptor is still the file at the path. */
  private async open(): Promise<fs.FileHandle> {
    if (this.handle && (await this.sameFile())) return this.handle;
    // No locker of this process holds the lock here (tryLock returns before), so closing drops nothing.
    await this.close();
    const handle = await fs.open(this.path, 'a+');
    this.handle = handle;
    this.stats = await handle.stat();
    return handle;
  }

  private async sameFile(): Promise<boolean> {
    if (!this.handle || !this.stats) return false;
    const now = await fs.stat(this.path).catch(() => undefined);
    return !!now && now.ino === this.stats.ino && now.dev === this.stats.dev;
  }

  private async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    this.stats = undefined;
    await handle?.close().catch(() => undefined);
  }

  private serial<T>(step: () => Promise<T>): Promise<T> {
    const run = this.queue.then(step, step);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/** The pid /proc/locks names for a POSIX lock on this file (Linux; undefined elsewhere or when free). */
export function lockHolderPid(stats: Pick<Stats, 'dev' | 'ino'>, procLocks?: string): number | undefined {
  let text = procLocks;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/locks', 'utf8');
    } catch {
      return undefined;
    }
  }
  // glibc's dev_t: major in bits 8-19 and 32-43, minor in bits 0-7 and 20-31.
  const dev = BigInt(stats.dev);
  const major = Number(((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn));
  const minor = Number((dev & 0xffn) | ((dev >> 12n) & ~0xffn));
  for (const line of text.split('\n')) {
    // "1: POSIX  ADVISORY  WRITE 4242 fe:00:2146498 0 EOF" (blocked waiters are "1: -> POSIX …")
    const match = /^\d+:\s+(POSIX|OFDLCK)\s+\S+\s+WRITE\s+(-?\d+)\s+([0-9a-f]+):([0-9a-f]+):(\d+)\s/.exec(
      line,
    );
    if (!match) continue;
    if (
      parseInt(match[3], 16) === major &&
      parseInt(match[4], 16) === minor &&
      Number(match[5]) === stats.ino
    ) {
      const pid = Number(match[2]);
      return pid > 0 ? pid : undefined;
    }
  }
  return undefined;
}

function processName(pid: number): string {
  try {
    return ` (${readFileSync(`/proc/${pid}/comm`, 'utf8').trim()})`;
  } catch {
    return '';
  }
}
