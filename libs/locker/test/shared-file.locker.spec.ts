/**
 * The shared-file locker's mode 'os' (the default): a POSIX fcntl write lock on `<directory>/lock`,
 * the lock Java's FileChannel.tryLock (and so ActiveMQ's SharedFileLocker) takes. The kernel names
 * its holder in /proc/locks; another process (forked here, taking the same fcntl lock) and the
 * lockers of this process exclude each other; a lock dropped behind the master's back demotes it.
 */
import { Logger } from '@nestjs/common';
import { FileLockUnavailableError, LockHeldError, LockerConfigurationError } from '@holdfast/locker';
import { forkTs, waitForExit, waitForMessage } from '@holdfast/testing';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lockerInstance, sleep, waitUntil, type TestInstance } from './locker-test-kit';

const INTERVAL = 300;
const KEEP_ALIVE = 150;
const HOLDER = join(__dirname, 'support', 'fcntl-holder.ts');

jest.setTimeout(60_000);

/** The pids /proc/locks names for POSIX write locks on `path`. */
function lockHolders(path: string): number[] {
  const { ino } = statSync(path);
  return readFileSync('/proc/locks', 'utf8')
    .split('\n')
    .filter(
      (line) => /^\d+:\s+POSIX\s+ADVISORY\s+WRITE\s/.test(line) && line.split(/\s+/)[5]?.endsWith(`:${ino}`),
    )
    .map((line) => Number(line.split(/\s+/)[4]));
}

describe("shared-file locker, mode 'os' (fcntl)", () => {
  const open: TestInstance[] = [];
  const children: ChildProcess[] = [];
  let directory: string;
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'locker-os-'));
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((i) => i.close()));
    for (const child of children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await waitForExit(child);
      }
    }
  });

  const start = async (extra: Record<string, unknown> = {}, locker: Record<string, unknown> = {}) => {
    const instance = await lockerInstance({
      locker: { type: 'shared-file', directory, ...locker },
      lockAcquireSleepInterval: INTERVAL,
      lockKeepAlivePeriod: KEEP_ALIVE,
      startup: 'background',
      ...extra,
    });
    open.push(instance);
    return instance;
  };

  const holderProcess = async (path: string) => {
    const child = forkTs(HOLDER, [path]);
    children.push(child);
    const message = await waitForMessage<{ type: string; pid: number; message?: string }>(
      child,
      (m) => m.type === 'locked' || m.type === 'error',
      30_000,
    );
    if (message.type !== 'locked') throw new Error(message.message);
    return child;
  };

  it('takes an fcntl write lock on <directory>/lock that /proc/locks names, and excludes a second locker of the same process', async () => {
    const master = await start({ startup: 'block' });
    await master.init();
    expect(master.locker.isMaster).toBe(true);
    const path = join(directory, 'lock');
    expect(lockHolders(path)).toEqual([process.pid]);
    expect(readFileSync(path, 'utf8')).toMatch(
      new RegExp(`^holdfast ${master.locker.instanceId} pid=${process.pid} `),
    );

    // The kernel would grant this process the lock again: the process keeps one holder itself.
    const standby = await start();
    await standby.init();
    await sleep(4 * INTERVAL);
    expect(standby.locker.role).toBe('standby');
    expect(await standby.locker.readHolder()).toBe(master.locker.instanceId);

    await master.close();
    await waitUntil(() => standby.locker.isMaster, 10_000, 'the in-process standby takes over');
    expect(standby.events.map((e) => e.type)).toEqual(['acquired']);
    expect(lockHolders(path)).toEqual([process.pid]);
  });

  it('waits while another process holds the fcntl lock, and takes it at its next attempt once that process is killed', async () => {
    const path = join(directory, 'lock');
    writeFileSync(path, '');
    const other = await holderProcess(path);
    const standby = await start();
    await standby.init();
    await sleep(4 * INTERVAL);
    expect(standby.locker.role).toBe('standby');
    expect(await standby.locker.readHolder()).toMatch(new RegExp(`^pid ${other.pid} `));

    other.kill('SIGKILL');
    await waitForExit(other);
    await waitUntil(() => standby.locker.isMaster, 3 * INTERVAL + 5_000, 'takeover after SIGKILL');
    expect(lockHolders(path)).toEqual([process.pid]);
  });

  it('another process waits while Holdfast holds the lock, and gets it once Holdfast releases it', async () => {
    const master = await start({ startup: 'block' });
    await master.init();
    const path = join(directory, 'lock');
    const child = forkTs(HOLDER, [path]);
    children.push(child);
    const locked = waitForMessage<{ type: string }>(child, (m) => m.type === 'locked', 30_000);
    await sleep(1_500);
    expect(lockHolders(path)).toEqual([process.pid]);
    await master.close();
    await locked;
    expect(lockHolders(path)).toEqual([child.pid]);
  });

  it('failIfLocked fails at once with LockHeldError naming the holder', async () => {
    const master = await start({ startup: 'block' });
    await master.init();
    const standby = await start({ failIfLocked: true });
    const error = await standby.init().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockHeldError);
    expect((error as LockHeldError).holder).toBe(master.locker.instanceId);
  });

  it('demotes when a descriptor of the lock file closed elsewhere in the process dropped the lock and another process took it', async () => {
    // A keep-alive every 2 s: the other process, polling every 20 ms, takes the dropped lock first.
    const master = await start({ startup: 'block', lockKeepAlivePeriod: 2_000 });
    await master.init();
    const path = join(directory, 'lock');
    const child = forkTs(HOLDER, [path]);
    children.push(child);
    await waitForMessage<{ type: string }>(child, (m) => m.type === 'waiting', 30_000);
    // readFileSync opens and closes the file: POSIX drops every lock of this process on it.
    readFileSync(path);
    await waitForMessage<{ type: string }>(child, (m) => m.type === 'locked', 10_000);
    await waitUntil(() => master.events.some((e) => e.type === 'lost'), 10_000, 'the demotion');
    expect(master.events.find((e) => e.type === 'lost')).toMatchObject({ reason: 'keep-alive-false' });
    await sleep(3 * INTERVAL);
    expect(master.locker.role).toBe('standby');
  });

  it('demotes when the lock file is replaced behind its back (another holder could lock the new file)', async () => {
    const master = await start({ startup: 'block' });
    await master.init();
    renameSync(join(directory, 'lock'), join(directory, 'lock.old'));
    writeFileSync(join(directory, 'lock'), '');
    await waitUntil(() => master.events.some((e) => e.type === 'lost'), 10_000, 'the demotion');
    // Back to acquiring in-process: the new file is free, so it is master again, on that file.
    await waitUntil(
      () => master.events.filter((e) => e.type === 'acquired').length === 2,
      10_000,
      're-acquire',
    );
    expect(lockHolders(join(directory, 'lock'))).toEqual([process.pid]);
  });

  it('honours lockFile, and refuses two lock names on one file in one process', async () => {
    const master = await start({ startup: 'block' }, { lockFile: 'broker.lock' });
    await master.init();
    expect(lockHolders(join(directory, 'broker.lock'))).toEqual([process.pid]);
    const other = await start({ lockName: 'reports' }, { lockFile: 'broker.lock' });
    const error = await other.init().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockerConfigurationError);
    expect(String((error as Error).message)).toContain("is already the lock file of lock 'default'");
  });

  it('logs the mode in use at startup', async () => {
    const log = jest.spyOn(Logger.prototype, 'log');
    try {
      const master = await start({ startup: 'block' });
      await master.init();
      const lines = log.mock.calls.map((c) => String(c[0]));
      expect(
        lines.some((l) => l.includes("mode 'os': an fcntl lock on") && l.includes(join(directory, 'lock'))),
      ).toBe(true);
    } finally {
      log.mockRestore();
    }
  });
});

describe("shared-file locker, mode 'os': where the lock cannot be taken", () => {
  afterEach(() => {
    jest.resetModules();
    jest.dontMock('os-lock');
  });

  /** LockerModule loaded afresh, with os-lock replaced by `factory` (or unloadable when it throws). */
  async function startWith(factory: () => unknown): Promise<unknown> {
    jest.resetModules();
    jest.doMock('os-lock', factory);
    const directory = mkdtempSync(join(tmpdir(), 'locker-os-'));
    const { lockerInstance: fresh } = await import('./locker-test-kit');
    const instance = await fresh({
      locker: { type: 'shared-file', directory },
      lockAcquireSleepInterval: INTERVAL,
      startup: 'background',
    });
    try {
      return await instance.init().then(
        () => undefined,
        (e: unknown) => e,
      );
    } finally {
      await instance.close();
    }
  }

  it('stops startup with FileLockUnavailableError naming the mode when os-lock cannot be loaded (no silent fallback)', async () => {
    const error = await startWith(() => {
      throw new Error("Cannot find module 'os-lock'");
    });
    expect((error as { code?: string }).code).toBe('HOLDFAST_LOCKER_FILE_LOCK_UNAVAILABLE');
    expect((error as Error).constructor.name).toBe(FileLockUnavailableError.name);
    const message = (error as Error).message;
    expect(message).toContain("mode 'os'");
    expect(message).toContain(
      "the native package os-lock, which takes the lock, could not be loaded (Cannot find module 'os-lock')",
    );
    expect(message).toContain("mode: 'mtime'");
  });

  it('stops startup when the file system refuses fcntl locks (ENOLCK, as NFSv3 without lockd answers)', async () => {
    const refused = Object.assign(new Error('no locks available'), { code: 'ENOLCK' });
    const error = await startWith(() => ({
      lock: () => Promise.reject(refused),
      unlock: () => Promise.resolve(),
    }));
    expect((error as { code?: string }).code).toBe('HOLDFAST_LOCKER_FILE_LOCK_UNAVAILABLE');
    expect((error as Error).message).toContain('the file system refuses fcntl locks (ENOLCK');
    expect((error as Error).message).toContain('NFSv4');
  });
});
