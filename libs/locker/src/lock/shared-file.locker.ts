import { promises as fs } from 'node:fs';
import { join, resolve } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { FileLockUnavailableError, LockerConfigurationError } from '../errors';
import { AbstractLocker } from './abstract.locker';
import { localOnlyLocks, readMountOf } from './file-lock-mount';
import type { LockerContext } from './locker.interface';
import { isUnsupported, loadNativeFileLock, NATIVE_FILE_LOCK_PACKAGE } from './native-file-lock';
import { ProcessFileLock } from './process-file-lock';

/** ActiveMQ's lock file name in the directory it shares (SharedFileLocker: `new File(directory, "lock")`). */
export const DEFAULT_LOCK_FILE = 'lock';

const MTIME_ADVICE =
  "Or choose mode: 'mtime' explicitly, for a file system without working locks: a lock directory whose " +
  'mtime the master refreshes, which ActiveMQ brokers do not see, and which a standby takes only once it is stale.';

/** The FileLockUnavailableError for this lock file, with its reason and advice. */
type Unavailable = (reason: string, advice: string) => FileLockUnavailableError;

/**
 * ActiveMQ's SharedFileLocker: an OS advisory lock on `<directory>/lock` (the file name is
 * configurable), a POSIX `fcntl` write lock over the whole file, which is what Java's
 * `FileChannel.tryLock` takes on Linux. So an ActiveMQ broker and Holdfast nodes sharing one
 * directory exclude each other, and the kernel frees a master's lock the moment its process dies
 * (a standby takes it at its next attempt, within one lockAcquireSleepInterval). On a network file
 * system the lock is the server's (NFSv4 locks; see the README).
 *
 * The lock belongs to the process: one locker of the process holds it at a time (ProcessFileLock),
 * and `keepAlive` asks the kernel for it again, so a lock dropped behind the master's back (the
 * file removed or replaced, a descriptor of it closed elsewhere in the process and another process
 * holding it since) demotes the master.
 */
export class SharedFileLocker extends AbstractLocker {
  lockPath!: string;
  private file!: ProcessFileLock;
  private readonly token = Symbol('shared-file-locker');

  override async configure(context: LockerContext): Promise<void> {
    super.configure(context);
    const lockName = context.lock.name;
    const directory = resolve(context.options.locker.directory ?? '.');
    await fs.mkdir(directory, { recursive: true });
    this.lockPath = join(await fs.realpath(directory), context.options.locker.lockFile ?? DEFAULT_LOCK_FILE);
    const unavailable: Unavailable = (reason, advice) =>
      new FileLockUnavailableError(lockName, this.lockPath, reason, advice);
    this.file = ProcessFileLock.for(this.lockPath, this.nativeFileLock(unavailable));
    await this.attachAndProbe(lockName, unavailable);
    this.logMode(context.lock);
  }

  /** The native package that takes the lock, once this thread and the lock's file system can hold one. */
  private nativeFileLock(unavailable: Unavailable): ReturnType<typeof loadNativeFileLock> {
    if (!isMainThread) {
      throw unavailable(
        'this locker runs in a worker thread, and an OS file lock belongs to the whole process, so lockers in ' +
          'two threads of one process would not exclude each other',
        'Run LockerModule on the main thread. ' + MTIME_ADVICE,
      );
    }
    let native;
    try {
      native = loadNativeFileLock();
    } catch (error) {
      throw unavailable(
        `the native package ${NATIVE_FILE_LOCK_PACKAGE}, which takes the lock, could not be loaded ` +
          `(${(error as Error)?.message ?? String(error)})`,
        `Install it beside @holdfast/locker (npm install ${NATIVE_FILE_LOCK_PACKAGE}; node-gyp builds it ` +
          "from its sources, with a C compiler and Node's headers). " +
          MTIME_ADVICE,
      );
    }
    const localOnly = localOnlyLocks(readMountOf(this.lockPath));
    if (localOnly) {
      throw unavailable(
        `the file system is ${localOnly}, so its locks stay on this host and a broker or node on another ` +
          'host would take the same lock',
        'Mount it with locks that reach the server (NFSv4, whose default is local_lock=none; CIFS without nobrl). ' +
          MTIME_ADVICE,
      );
    }
    return native;
  }

  /** Makes this locker the process's one user of the file, and checks that the file system takes fcntl locks. */
  private async attachAndProbe(lockName: string, unavailable: Unavailable): Promise<void> {
    const other = this.file.attach(this.token, lockName);
    if (other !== undefined) {
      throw new LockerConfigurationError(
        `Lock '${lockName}': ${this.lockPath} is already the lock file of lock '${other}' in this process. ` +
          `Two locks need two files: give each its own directory or lockFile.`,
      );
    }
    try {
      await this.file.probe();
    } catch (error) {
      await this.file.detach(this.token);
      if (!isUnsupported(error)) throw error;
      throw unavailable(
        `the file system refuses fcntl locks (${(error as NodeJS.ErrnoException).code}: ${(error as Error).message})`,
        'On NFS, locks need NFSv4 (or lockd and statd running for NFSv3). ' + MTIME_ADVICE,
      );
    }
  }

  private logMode({ name: lockName, keepAlivePeriod: lockKeepAlivePeriod }: LockerContext['lock']): void {
    this.logger.log(
      `Lock '${lockName}': shared-file locker in mode 'os': an fcntl lock on ${this.lockPath} ` +
        `(${NATIVE_FILE_LOCK_PACKAGE}), the lock ActiveMQ's SharedFileLocker takes.`,
    );
    if (lockKeepAlivePeriod === 0) {
      this.logger.warn(
        `Lock '${lockName}': lockKeepAlivePeriod is 0, so the master never checks its lock. If ${this.lockPath} ` +
          `is removed or replaced, another instance or broker can lock the new file at its next attempt and two ` +
          `masters run at once. Set lockKeepAlivePeriod (e.g. '10s') to detect it and demote.`,
      );
    }
  }

  protected async tryAcquire(): Promise<boolean> {
    // A file replaced under an attempt (ActiveMQ removes its lock file when it stops) is tried again at once.
    for (let attempt = 0; attempt < 3; attempt++) {
      const outcome = await this.file.tryLock(this.token, this.context.holder.id);
      if (outcome !== 'replaced') return outcome === 'acquired';
    }
    return false;
  }

  async keepAlive(): Promise<boolean> {
    const lost = await this.file.check(this.token);
    if (lost === undefined) return true;
    this.logger.warn(`Lock '${this.context.lock.name}' lost: ${lost}`);
    return false;
  }

  async stop(): Promise<void> {
    await this.file?.release(this.token);
  }

  async dispose(): Promise<void> {
    await this.file?.detach(this.token);
  }

  override async holder(): Promise<string | undefined> {
    return this.file?.whoHolds();
  }
}
