/**
 * The OS advisory file lock the shared-file locker takes in mode 'os': a POSIX `fcntl` record lock
 * (`F_SETLK`, `F_WRLCK`) over the whole file, the lock Java's `FileChannel.tryLock` takes on Linux
 * and so the one ActiveMQ's SharedFileLocker holds on `<directory>/lock`. Node has no such call;
 * the native package `os-lock` (Node-API, built from its sources at install) makes it.
 */

/** What the shared-file locker needs of the native package (os-lock's API). */
export interface NativeFileLock {
  /** Rejects with an errno error (`code` EAGAIN or EACCES when another process holds a conflicting lock). */
  lock(
    fd: number,
    start: number,
    length: number,
    options: { exclusive: boolean; immediate: boolean },
  ): Promise<void>;
  unlock(fd: number, start: number, length: number): Promise<void>;
}

/** The npm package that provides the OS lock: an optional peer of @holdfast/locker. */
export const NATIVE_FILE_LOCK_PACKAGE = 'os-lock';

let loaded: { lock: NativeFileLock } | { error: unknown } | undefined;

/**
 * Loads os-lock on first use (never at import: it is an optional peer, and an application on the
 * database lockers does not need it). Throws what `require` threw; the caller turns it into a
 * startup error that names the mode.
 */
export function loadNativeFileLock(): NativeFileLock {
  if (!loaded) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      loaded = { lock: require(NATIVE_FILE_LOCK_PACKAGE) as NativeFileLock };
    } catch (error) {
      loaded = { error };
    }
  }
  if ('error' in loaded) throw loaded.error;
  return loaded.lock;
}

/** errno codes F_SETLK answers when another process (or open file description) holds the lock. */
const HELD_CODES = new Set(['EAGAIN', 'EACCES', 'EWOULDBLOCK', 'EBUSY']);

export function isHeldElsewhere(error: unknown): boolean {
  return HELD_CODES.has(String((error as NodeJS.ErrnoException)?.code));
}

/** errno codes of a file system that cannot take the lock at all (as opposed to a lock held). */
const UNSUPPORTED_CODES = new Set(['ENOLCK', 'EOPNOTSUPP', 'ENOTSUP', 'ENOSYS', 'EINVAL']);

export function isUnsupported(error: unknown): boolean {
  return UNSUPPORTED_CODES.has(String((error as NodeJS.ErrnoException)?.code));
}
