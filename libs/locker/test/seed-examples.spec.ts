/**
 * The seed's (ActiveMQ Classic's) own example settings for its three lockers boot as documented:
 * shared-file and database with lockKeepAlivePeriod 10000 / lockAcquireSleepInterval 5000, the
 * lease with 5000 / 10000; and lockKeepAlivePeriod 0 (no keep-alive) where the seed allows it.
 */
import { describeEachDatabase, type TestDatabaseContext } from '@holdfast/testing';
import { Logger } from '@nestjs/common';
import type { LockerModuleOptions } from '@holdfast/locker';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lockerInstance, sleep, waitUntil, type TestInstance } from './locker-test-kit';

const SEED_EXAMPLES = {
  'shared-file': { lockKeepAlivePeriod: 10_000, lockAcquireSleepInterval: 5_000 },
  database: { lockKeepAlivePeriod: 10_000, lockAcquireSleepInterval: 5_000 },
  'lease-database': { lockKeepAlivePeriod: 5_000, lockAcquireSleepInterval: 10_000 },
} as const;

jest.setTimeout(60_000);

/** A master (startup 'block') and a standby; both boot, the roles hold for a while. */
async function bootsMasterAndStandby(options: LockerModuleOptions, open: TestInstance[]): Promise<void> {
  const master = await lockerInstance({ ...options, startup: 'block' });
  open.push(master);
  await master.init();
  expect(master.locker.isMaster).toBe(true);
  const standby = await lockerInstance({ ...options, startup: 'background' });
  open.push(standby);
  await standby.init();
  // Its first attempt is made at once; it found the lock held.
  await waitUntil(() => standby.locker.role === 'standby' && standby.locker.lastError === undefined);
  await sleep(1_500);
  expect(master.locker.isMaster).toBe(true);
  expect(master.events.map((e) => e.type)).toEqual(['acquired']);
  expect(standby.locker.role).toBe('standby');
  expect(standby.events).toEqual([]);
}

describe("the seed's example configurations", () => {
  const open: TestInstance[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((i) => i.close()));
    jest.restoreAllMocks();
  });

  it('shared-file: lockKeepAlivePeriod 10000, lockAcquireSleepInterval 5000', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'locker-seed-'));
    await bootsMasterAndStandby(
      { locker: { type: 'shared-file', directory }, ...SEED_EXAMPLES['shared-file'] },
      open,
    );
  });

  it('shared-file: lockKeepAlivePeriod 0 (no keep-alive) boots and warns that tampering goes unnoticed', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    const directory = mkdtempSync(join(tmpdir(), 'locker-seed-'));
    await bootsMasterAndStandby(
      { locker: { type: 'shared-file', directory }, lockKeepAlivePeriod: 0, lockAcquireSleepInterval: 500 },
      open,
    );
    const warnings = warn.mock.calls.map((c) => String(c[0]));
    expect(warnings.some((w) => /lockKeepAlivePeriod is 0/.test(w) && /two masters/.test(w))).toBe(true);
  });
});

describeEachDatabase(
  "the seed's example configurations",
  (ctx: TestDatabaseContext) => {
    const open: TestInstance[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((i) => i.close()));
    });
    const base = (lockName: string) => ({
      dataSource: ctx.dataSource,
      tablePrefix: ctx.prefix,
      schema: 'create' as const,
      lockName,
    });

    it('database: lockKeepAlivePeriod 10000, lockAcquireSleepInterval 5000', async () => {
      await bootsMasterAndStandby(
        { ...base('seed-db'), locker: { type: 'database' }, ...SEED_EXAMPLES.database },
        open,
      );
    });

    it('database: lockKeepAlivePeriod 0 (no keep-alive) boots', async () => {
      await bootsMasterAndStandby(
        { ...base('seed-db-0'), locker: { type: 'database' }, lockKeepAlivePeriod: 0 },
        open,
      );
    });

    it('lease-database: lockKeepAlivePeriod 5000, lockAcquireSleepInterval 10000', async () => {
      await bootsMasterAndStandby(
        { ...base('seed-lease'), locker: { type: 'lease-database' }, ...SEED_EXAMPLES['lease-database'] },
        open,
      );
    });
  },
  { tables: ['HOLDFAST_LOCK'] },
);
