/**
 * Another process on a lock file: takes the whole-file fcntl write lock (what Java's
 * FileChannel.tryLock and the shared-file locker's mode 'os' take) as soon as it is free, says so
 * over IPC, and keeps it until killed. Usage: forkTs(this, [lockPath]).
 */
import { open, type FileHandle } from 'node:fs/promises';
import { lock } from 'os-lock';

/** Kept for the life of the process: a handle collected as garbage is closed, which drops the lock. */
let handle: FileHandle | undefined;

async function main(): Promise<void> {
  handle = await open(process.argv[2], 'a+');
  let waiting = false;
  for (;;) {
    try {
      await lock(handle.fd, 0, 0, { exclusive: true, immediate: true });
      break;
    } catch (error) {
      if (!['EAGAIN', 'EACCES'].includes(String((error as NodeJS.ErrnoException).code))) throw error;
      if (!waiting) process.send?.({ type: 'waiting' });
      waiting = true;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  process.send?.({ type: 'locked', pid: process.pid });
  setInterval(() => undefined, 60_000);
}

process.on('disconnect', () => process.exit(0));
main().catch((error: unknown) => {
  process.send?.({ type: 'error', message: String(error) });
  process.exit(1);
});
