/**
 * The shared-file locker's mode 'mtime' (for file systems without working OS locks): an exclusive
 * lock directory, tampering detected, and its mtime.
 *
 * The lock's mtime is the holder's clock to the millisecond: never stamped into the
 * future (proper-lockfile's precision probe put a new lock up to 1 s ahead, so a master killed
 * in its first second left a lock that turned stale up to 1 s late), and refreshed from there.
 */
import { Logger } from '@nestjs/common';
import { LockHeldError } from '@holdfast/locker';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lockerInstance, sleep, waitUntil, type TestInstance } from './locker-test-kit';

const INTERVAL = 500;
const KEEP_ALIVE = 120;

describe("shared-file locker, mode 'mtime'", () => {
  const open: TestInstance[] = [];
  let directory: string;
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'locker-file-'));
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((i) => i.close()));
  });

  const start = async (extra: { failIfLocked?: boolean; startup?: 'block' | 'background' } = {}) => {
    const instance = await lockerInstance({
      locker: { type: 'shared-file', mode: 'mtime', directory, stale: 2_000 },
      lockAcquireSleepInterval: INTERVAL,
      lockKeepAlivePeriod: KEEP_ALIVE,
      startup: 'background',
      ...extra,
    });
    open.push(instance);
    return instance;
  };

  const lostThenReacquired = async (instance: TestInstance) => {
    await waitUntil(() => instance.events.some((e) => e.type === 'lost'), 10_000, 'lost');
    expect(instance.events.find((e) => e.type === 'lost')).toMatchObject({ reason: 'keep-alive-false' });
    // Back to acquiring in-process: nobody else holds it, so it becomes master again.
    await waitUntil(
      () => instance.events.filter((e) => e.type === 'acquired').length === 2,
      15_000,
      're-acquire',
    );
    expect(instance.events.map((e) => e.type)).toEqual(['acquired', 'lost', 'acquired']);
  };

  it('holds an exclusive lock and names the holder in the owner file', async () => {
    const master = await start({ startup: 'block' });
    await master.init();
    expect(master.locker.isMaster).toBe(true);
    expect(readFileSync(join(directory, 'default.owner'), 'utf8').split('\n')[0]).toBe(
      master.locker.instanceId,
    );
    const standby = await start();
    await standby.init();
    await sleep(3 * INTERVAL);
    expect(standby.locker.role).toBe('standby');
    expect(await standby.locker.readHolder()).toBe(master.locker.instanceId);
    await master.close();
    await waitUntil(() => standby.locker.isMaster, 10_000, 'takeover after release');
  });

  it('stays master when lockKeepAlivePeriod is longer than the lock file can be trusted (keep-alive runs sooner)', async () => {
    // stale 2 s, refresh every 0.5 s, 0.5 s margin: a refresh vouches for 1.5 s only, no more than the keep-alive period.
    const instance = await lockerInstance({
      locker: { type: 'shared-file', mode: 'mtime', directory, stale: 2_000 },
      lockAcquireSleepInterval: 2_000,
      lockKeepAlivePeriod: 1_500,
      startup: 'block',
    });
    open.push(instance);
    await instance.init();
    await sleep(4_000);
    expect(instance.events.map((e) => e.type)).toEqual(['acquired']);
    expect(instance.locker.isMaster).toBe(true);
  });

  it('failIfLocked fails at once with LockHeldError', async () => {
    const master = await start({ startup: 'block' });
    await master.init();
    const standby = await start({ failIfLocked: true });
    const error = await standby.init().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockHeldError);
    expect((error as LockHeldError).holder).toBe(master.locker.instanceId);
  });

  it('demotes when the lock file is deleted behind its back', async () => {
    const instance = await start({ startup: 'block' });
    await instance.init();
    rmSync(join(directory, 'default.lock'), { recursive: true, force: true });
    await lostThenReacquired(instance);
  });

  it('demotes when the owner file is rewritten behind its back', async () => {
    const instance = await start({ startup: 'block' });
    await instance.init();
    writeFileSync(join(directory, 'default.owner'), 'someone-else\n');
    await lostThenReacquired(instance);
  });

  it("demotes when the lock file's mtime is changed behind its back (the holder's refresh reports it compromised)", async () => {
    const instance = await start({ startup: 'block' });
    await instance.init();
    const past = new Date(Date.now() - 60_000);
    utimesSync(join(directory, 'default.lock'), past, past);
    await lostThenReacquired(instance);
  });

  it('demotes the moment its refresh finds the lock compromised, not at the next keep-alive', async () => {
    // stale 8 s: the refresh runs every 2 s, the next keep-alive about 3 s after the acquisition.
    // The role is read right after the compromise is logged, before any timer can run.
    const instance = await lockerInstance({
      locker: { type: 'shared-file', mode: 'mtime', directory, stale: 8_000 },
      lockAcquireSleepInterval: INTERVAL,
      lockKeepAlivePeriod: 60_000,
      startup: 'block',
    });
    open.push(instance);
    let roleAfterCompromise: string | undefined;
    const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(function (message: unknown) {
      if (String(message).includes('compromised')) {
        setImmediate(() => (roleAfterCompromise ??= instance.locker.role));
      }
    });
    try {
      await instance.init();
      const past = new Date(Date.now() - 60_000);
      utimesSync(join(directory, 'default.lock'), past, past);
      await waitUntil(() => roleAfterCompromise !== undefined, 10_000, 'the compromise');
      expect(roleAfterCompromise).toBe('standby');
      expect(instance.events.find((e) => e.type === 'lost')).toMatchObject({ reason: 'keep-alive-false' });
    } finally {
      error.mockRestore();
    }
  });
});

describe("shared-file locker, mode 'mtime': lock file mtime", () => {
  const open: TestInstance[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((i) => i.close()));
  });

  it('a new lock is stamped with the current time, never later (every acquisition, the first included)', async () => {
    for (let round = 0; round < 3; round++) {
      const directory = mkdtempSync(join(tmpdir(), 'locker-mtime-'));
      const instance = await lockerInstance({
        locker: { type: 'shared-file', mode: 'mtime', directory, stale: 2_000 },
        lockAcquireSleepInterval: 500,
        lockKeepAlivePeriod: 200,
        startup: 'block',
      });
      open.push(instance);
      await instance.init();
      const checked = Date.now();
      const { mtimeMs } = statSync(join(directory, 'default.lock'));
      // The lock was stamped before `checked` was read: a later mtime is a stamp from the future.
      expect(mtimeMs).toBeLessThanOrEqual(checked + 1);
      expect(mtimeMs).toBeGreaterThan(checked - 2_000);
      await instance.close();
    }
  });

  it('the holder refreshes the mtime to its clock, below a second apart', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'locker-mtime-'));
    const instance = await lockerInstance({
      locker: { type: 'shared-file', mode: 'mtime', directory, stale: 2_000 },
      lockAcquireSleepInterval: 500,
      lockKeepAlivePeriod: 200,
      startup: 'block',
    });
    open.push(instance);
    await instance.init();
    const lock = join(directory, 'default.lock');
    const first = statSync(lock).mtimeMs;
    await waitUntil(() => statSync(lock).mtimeMs !== first, 5_000, 'a refresh');
    const checked = Date.now();
    const refreshed = statSync(lock).mtimeMs;
    expect(refreshed).toBeLessThanOrEqual(checked + 1);
    expect(checked - refreshed).toBeLessThan(2_000);
  });
});
