/**
 * PostgreSQL and MariaDB only (left out of the run otherwise, see jest.config.js).
 * Round trips of the lockers' operations, counted by a TcpProxy between them and the server: a
 * database 1 ms away pays each one. No timing here, only counts.
 * - The database locker's acquire on a free row: 1 (was 4 on PostgreSQL, 5 on MariaDB: BEGIN,
 *   SELECT ... FOR UPDATE SKIP LOCKED, the idle bound(s), the claiming UPDATE, one at a time).
 * - Its attempt on a row another instance holds (a standby's poll): 2 on PostgreSQL (the attempt,
 *   then the ROLLBACK of its empty transaction), 1 on MariaDB (both were 3: BEGIN, SELECT, ROLLBACK).
 * - Counted only, already at 1: its keep-alive and release; the lease locker's acquire, attempt,
 *   renewal and release; a @ScheduledLock tick that skips (1) or runs (2: the lock, then the unlock
 *   after the job).
 */
import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import { HoldfastTimers, sqlClientFor, type SqlClient, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  TcpProxy,
  testServerDatabases,
  testServerPort,
  uniqueTablePrefix,
} from '@holdfast/testing';
import { ScheduledLockModule } from '../src';
import { LeaseDatabaseLocker, LockQueryResolver, ScheduledLockExecutor } from '../src/internal';
import { LockConnection } from '../src/lock/lock-connection';
import { idleTimeoutFor, statementTimeoutFor } from '../src/lock/lock-timing';
import type { LockerContext } from '../src/lock/locker.interface';
import { RowLockTransaction } from '../src/lock/row-lock.transaction';
import { prepareLockRow } from '../src/store/lock-row';

const KEEP_ALIVE = 30_000;

/** One attempt, as the acquire loop makes it (tryAcquire is protected). */
class TestLeaseLocker extends LeaseDatabaseLocker {
  attempt(): Promise<boolean> {
    return this.tryAcquire();
  }
}

for (const db of testServerDatabases()) {
  describe(`the lockers' statements through a proxy: round trips [${db}]`, () => {
    let proxy: TcpProxy;
    let dataSource: DataSource;
    let sql: SqlClient;
    const prefix = uniqueTablePrefix('lk_rt');

    beforeAll(async () => {
      proxy = new TcpProxy(testServerPort(db));
      dataSource = await createTestDataSource(db, { port: await proxy.start() });
      sql = sqlClientFor(dataSource);
    });

    afterAll(async () => {
      if (dataSource?.isInitialized) {
        await sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}HOLDFAST_LOCK`));
        await dataSource.destroy();
      }
      await proxy?.stop();
    });

    /** The database locker's hold as DatabaseLocker.configure builds it, for `holderId`. */
    async function rowLock(lockName: string, holderId: string) {
      const queries = await prepareLockRow(sql, { tablePrefix: prefix, schema: 'create' }, lockName);
      const connection = new LockConnection(sql, statementTimeoutFor(10_000, KEEP_ALIVE));
      const idleTimeout = idleTimeoutFor(KEEP_ALIVE);
      const hold = new RowLockTransaction({ connection, queries, lockName, holderId, idleTimeout });
      return { hold, connection, queries, idleTimeout };
    }

    it(`database locker: acquire 1 round trip, a standby's attempt ${db === 'postgres' ? 2 : 1}; keep-alive and release 1`, async () => {
      // Quotes and a backslash: PostgreSQL's one-message acquire carries the values as literals.
      const lockName = `rt 'db' \\ lock`;
      const ours = await rowLock(lockName, `ours 'o' \\ holder`);
      const other = await rowLock(lockName, 'other');
      try {
        expect(await other.hold.acquire()).toBe(true);
        expect(await ours.hold.acquire()).toBe(false); // the standby's connection is open from here on
        const attempt = await proxy.roundTripsOf(async () => expect(await ours.hold.acquire()).toBe(false));
        await other.hold.release();
        const acquire = await proxy.roundTripsOf(async () => expect(await ours.hold.acquire()).toBe(true));

        // Held as before: in an open transaction with the row claimed in our name, bounded by the
        // server's idle timeout(s), and not to be taken by another instance.
        const read = ours.queries.readRow(lockName);
        const idle =
          db === 'postgres'
            ? `SELECT current_setting('idle_in_transaction_session_timeout') AS idle`
            : 'SELECT @@session.idle_transaction_timeout AS idle, @@session.wait_timeout AS wait';
        const [row] = await ours.connection.run('read', (tx) => tx.query(statement(read.sql, read.params)));
        const [bound] = await ours.connection.run('read', (tx) => tx.query(statement(idle)));
        expect(row.broker_name).toBe(`ours 'o' \\ holder`);
        const seconds = Math.ceil(ours.idleTimeout / 1000);
        if (db === 'postgres') expect(bound).toEqual({ idle: `${seconds}s` });
        else expect([Number(bound.idle), Number(bound.wait)]).toEqual([seconds, seconds]);
        expect(await other.hold.acquire()).toBe(false);

        const keepAlive = await proxy.roundTripsOf(async () => expect(await ours.hold.touch()).toBe(true));
        const release = await proxy.roundTripsOf(() => ours.hold.release());
        expect(await other.hold.acquire()).toBe(true); // released indeed
        expect({ acquire, attempt, keepAlive, release }).toEqual({
          acquire: 1,
          attempt: db === 'postgres' ? 2 : 1,
          keepAlive: 1,
          release: 1,
        });
      } finally {
        await other.hold.release();
        await ours.hold.release();
      }
    });

    it('lease locker: acquire, attempt, renewal and release 1 round trip each', async () => {
      const context = (holderId: string): LockerContext => ({
        options: {
          tablePrefix: prefix,
          schema: 'create',
          maxAllowableDiffFromDBTime: 0,
          sharedFileStale: 10_000,
          locker: { type: 'lease-database' },
        },
        lock: { name: 'rt-lease', acquireSleepInterval: 10_000, keepAlivePeriod: 3_000, failIfLocked: false },
        holder: { id: holderId },
        database: () => ({ dataSource, sql }),
        logger: new Logger('round-trips'),
        timers: new HoldfastTimers(),
      });
      const ours = new TestLeaseLocker();
      const other = new TestLeaseLocker();
      await ours.configure(context('ours'));
      await other.configure(context('other'));
      try {
        expect(await other.attempt()).toBe(true);
        expect(await ours.attempt()).toBe(false);
        const attempt = await proxy.roundTripsOf(async () => expect(await ours.attempt()).toBe(false));
        await other.stop();
        const acquire = await proxy.roundTripsOf(async () => expect(await ours.attempt()).toBe(true));
        const renewal = await proxy.roundTripsOf(async () => expect(await ours.keepAlive()).toBe(true));
        const release = await proxy.roundTripsOf(() => ours.stop());
        expect(await other.attempt()).toBe(true);
        expect({ acquire, attempt, renewal, release }).toEqual({
          acquire: 1,
          attempt: 1,
          renewal: 1,
          release: 1,
        });
      } finally {
        for (const locker of [ours, other]) {
          await locker.stop();
          await locker.dispose();
        }
      }
    });

    it('@ScheduledLock: a tick that runs the job 2 round trips (lock, unlock), one that skips it 1', async () => {
      const app = await Test.createTestingModule({
        imports: [ScheduledLockModule.forRoot({ dataSource, tablePrefix: prefix, schema: 'create' })],
      }).compile();
      await app.init();
      try {
        const executor = app.get(ScheduledLockExecutor);
        const meta = { name: 'rt-job', lockAtMostFor: 60_000, lockAtLeastFor: 0, where: 'RoundTrips.job' };
        let ran = 0;
        const tick = () => executor.run(meta, undefined, async () => ++ran, []);
        await tick(); // the job's row is created at its first tick
        const run = await proxy.roundTripsOf(async () => expect(await tick()).toBe(2));
        const take = new LockQueryResolver(sql.dialect, prefix).acquireLease({
          id: meta.name,
          holder: 'elsewhere',
          leaseMillis: 60_000,
        });
        expect(await sql.execute(statement(take.sql, take.params))).toBe(1);
        const skip = await proxy.roundTripsOf(async () => expect(await tick()).toBeUndefined());
        expect(ran).toBe(2);
        expect({ run, skip }).toEqual({ run: 2, skip: 1 });
      } finally {
        await app.close();
      }
    });
  });
}
