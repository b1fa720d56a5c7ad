/**
 * The lockers' operations for bench/latency.bench.ts, each alone: the database locker (a row lock
 * in a transaction kept open), the lease-database locker (a lease in the lock row) and a
 * @ScheduledLock tick, run through the lockers' own code on a DataSource the caller points at a
 * proxy. A second instance of each locker (`other`) takes the lock where an operation needs it
 * held elsewhere; its statements run in `prepare`, which the bench does not count.
 */
import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import { HoldfastTimers, type SqlClient, statement } from '@holdfast/core/kit';
import { ScheduledLockModule } from '@holdfast/locker';
import {
  DatabaseLocker,
  LeaseDatabaseLocker,
  LockQueryResolver,
  ScheduledLockExecutor,
} from '@holdfast/locker/internal';
import type { LockerContext } from '../../libs/locker/src/lock/locker.interface';

/** One operation measured alone: `run` does it once (after `prepare`, which is not counted). */
export interface LockerOperation {
  name: string;
  prepare?: () => Promise<void>;
  run: () => Promise<unknown>;
}

/** The lockers' attempt is protected: one attempt, as the acquire loop makes it. */
class BenchDatabaseLocker extends DatabaseLocker {
  attempt(): Promise<boolean> {
    return this.tryAcquire();
  }
}

class BenchLeaseLocker extends LeaseDatabaseLocker {
  attempt(): Promise<boolean> {
    return this.tryAcquire();
  }
}

function context(
  dataSource: DataSource,
  sql: SqlClient,
  prefix: string,
  type: 'database' | 'lease-database',
  holderId: string,
): LockerContext {
  return {
    options: {
      tablePrefix: prefix,
      schema: 'create',
      maxAllowableDiffFromDBTime: 0,
      sharedFileStale: 10_000,
      locker: { type },
    },
    lock: {
      name: `latency-${type}`,
      // The defaults: 10 s between attempts; keep-alives every 30 s (database), 3.3 s (lease).
      acquireSleepInterval: 10_000,
      keepAlivePeriod: type === 'database' ? 30_000 : 3_333,
      failIfLocked: false,
    },
    holder: { id: holderId, configured: false },
    database: () => ({ dataSource, sql }),
    logger: new Logger(`latency:${type}:${holderId}`),
    timers: new HoldfastTimers(),
  };
}

/** Throws unless `value` is `expected`: an operation that did not do its work measures nothing. */
function expectResult(what: string, value: unknown, expected: unknown): void {
  if (value !== expected) throw new Error(`${what}: expected ${String(expected)}, got ${String(value)}`);
}

/** The lockers' operations on `dataSource` (its HOLDFAST_LOCK under `prefix`); `close` ends them. */
export async function lockerOperations(
  dataSource: DataSource,
  sql: SqlClient,
  prefix: string,
): Promise<{ operations: LockerOperation[]; close: () => Promise<void> }> {
  // Database locker: `ours` is measured, `other` holds the row where an operation needs it held.
  const ours = new BenchDatabaseLocker();
  const other = new BenchDatabaseLocker();
  await ours.configure(context(dataSource, sql, prefix, 'database', 'bench-ours'));
  await other.configure(context(dataSource, sql, prefix, 'database', 'bench-other'));
  /** A standby that polled while `other` held the row (its connection open), then the row freed. */
  const standbyBeforeTakeover = async () => {
    await ours.stop();
    if (!(await other.holder())) expectResult('other takes the row', await other.attempt(), true);
    expectResult('a standby poll', await ours.attempt(), false);
    await other.stop();
  };
  const rowHeldElsewhere = async () => {
    await ours.stop();
    if (!(await other.holder())) expectResult('other takes the row', await other.attempt(), true);
    // The standby's connection is open, as it is between polls.
    expectResult('a standby poll', await ours.attempt(), false);
  };
  const rowHeld = async () => {
    if (await ours.holder()) return;
    await other.stop();
    expectResult('ours takes the row', await ours.attempt(), true);
  };

  // Lease locker, the same way.
  const lease = new BenchLeaseLocker();
  const leaseOther = new BenchLeaseLocker();
  await lease.configure(context(dataSource, sql, prefix, 'lease-database', 'bench-ours'));
  await leaseOther.configure(context(dataSource, sql, prefix, 'lease-database', 'bench-other'));
  let leaseHeld = false;
  let otherLeaseHeld = false;
  const leaseStandbyBeforeTakeover = async () => {
    if (leaseHeld) await lease.stop();
    leaseHeld = false;
    if (!otherLeaseHeld) expectResult('other takes the lease', await leaseOther.attempt(), true);
    expectResult('a standby poll', await lease.attempt(), false);
    await leaseOther.stop();
    otherLeaseHeld = false;
  };
  const leaseHeldElsewhere = async () => {
    if (leaseHeld) await lease.stop();
    leaseHeld = false;
    if (!otherLeaseHeld) expectResult('other takes the lease', await leaseOther.attempt(), true);
    otherLeaseHeld = true;
    expectResult('a standby poll', await lease.attempt(), false);
  };
  const leaseOurs = async () => {
    if (leaseHeld) return;
    if (otherLeaseHeld) await leaseOther.stop();
    otherLeaseHeld = false;
    expectResult('ours takes the lease', await lease.attempt(), true);
    leaseHeld = true;
  };

  // @ScheduledLock: the executor the decorator calls, on a job that does nothing.
  const scheduled = await Test.createTestingModule({
    imports: [ScheduledLockModule.forRoot({ dataSource, tablePrefix: prefix, schema: 'create' })],
  }).compile();
  await scheduled.init();
  const executor = scheduled.get(ScheduledLockExecutor);
  const meta = { name: 'latency-job', lockAtMostFor: 60_000, lockAtLeastFor: 0, where: 'Bench.job' };
  const job = async () => 'ran';
  const queries = new LockQueryResolver(sql.dialect, prefix);
  const takeJobLock = queries.acquireLease({ id: meta.name, holder: 'elsewhere', leaseMillis: 60_000 });
  const freeJobLock = queries.releaseLease(meta.name, 'elsewhere');
  const free = async () => void (await sql.execute(statement(freeJobLock.sql, freeJobLock.params)));
  // The executor creates the job's row at its first tick: not counted.
  await executor.run(meta, undefined, job, []);

  return {
    operations: [
      {
        name: 'database locker: acquire (row free)',
        prepare: standbyBeforeTakeover,
        run: async () => expectResult('acquire', await ours.attempt(), true),
      },
      {
        name: 'database locker: attempt, row held',
        prepare: rowHeldElsewhere,
        run: async () => expectResult('attempt', await ours.attempt(), false),
      },
      {
        name: 'database locker: keep-alive',
        prepare: rowHeld,
        run: async () => expectResult('keep-alive', await ours.keepAlive(), true),
      },
      { name: 'database locker: release', prepare: rowHeld, run: () => ours.stop() },
      {
        name: 'lease locker: acquire (lease free)',
        prepare: leaseStandbyBeforeTakeover,
        run: async () => {
          expectResult('acquire', await lease.attempt(), true);
          leaseHeld = true;
        },
      },
      {
        name: 'lease locker: attempt, lease held',
        prepare: leaseHeldElsewhere,
        run: async () => expectResult('attempt', await lease.attempt(), false),
      },
      {
        name: 'lease locker: keep-alive (renewal)',
        prepare: leaseOurs,
        run: async () => expectResult('keep-alive', await lease.keepAlive(), true),
      },
      {
        name: 'lease locker: release',
        prepare: leaseOurs,
        run: async () => {
          await lease.stop();
          leaseHeld = false;
        },
      },
      {
        name: '@ScheduledLock tick, run (lock + unlock)',
        prepare: free,
        run: async () => expectResult('a run', await executor.run(meta, undefined, job, []), 'ran'),
      },
      {
        name: '@ScheduledLock tick, locked elsewhere',
        prepare: async () => {
          await free();
          await sql.execute(statement(takeJobLock.sql, takeJobLock.params));
        },
        run: async () => expectResult('a skip', await executor.run(meta, undefined, job, []), undefined),
      },
    ],
    close: async () => {
      for (const locker of [ours, other, lease, leaseOther]) {
        await locker.stop().catch(() => undefined);
        await locker.dispose().catch(() => undefined);
      }
      await scheduled.close();
    },
  };
}
