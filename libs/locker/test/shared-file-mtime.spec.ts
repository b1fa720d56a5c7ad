/**
 * The shared-file lock's mtime is the holder's clock to the millisecond: never stamped into the
 * future (proper-lockfile's precision probe put a new lock up to 1 s ahead, so a master killed
 * in its first second left a lock that turned stale up to 1 s late), and refreshed from there.
 */
import { statSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lockerInstance, waitUntil, type TestInstance } from './locker-test-kit';

describe('shared-file locker: lock file mtime', () => {
  const open: TestInstance[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((i) => i.close()));
  });

  it('a new lock is stamped with the current time, never later (every acquisition, the first included)', async () => {
    for (let round = 0; round < 3; round++) {
      const directory = mkdtempSync(join(tmpdir(), 'locker-mtime-'));
      const instance = await lockerInstance({
        locker: { type: 'shared-file', directory, stale: 2_000 },
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
      locker: { type: 'shared-file', directory, stale: 2_000 },
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
