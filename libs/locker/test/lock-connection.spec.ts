/**
 * The database lockers run on a connection reserved from their own coordination pool (#31; from
 * the DataSource's pool with coordinationPool false): a pool saturated by the application's own
 * work does not starve their keep-alives, and a shared pool too small to spare one is reported at startup.
 */
import { configureCoordinationPool, sqlClientFor, statement } from '@holdfast/core/kit';
import { createTestDataSource, testDatabases, uniqueTablePrefix, type TestDatabase } from '@holdfast/testing';
import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { idleTimeoutFor, statementTimeoutFor } from '../src/lock/lock-timing';
import { LockConnection } from '../src/lock/lock-connection';
import { lockerInstance, sleep, waitUntil, type TestInstance } from './locker-test-kit';

const SLEEP_SQL: Record<string, (seconds: number) => string> = {
  postgres: (s) => `SELECT pg_sleep(${s})`,
  mariadb: (s) => `SELECT SLEEP(${s})`,
};

jest.setTimeout(60_000);

describe('lock connection sizing', () => {
  it('the server ends a silent lock transaction a little above the keep-alive period; statements are bounded', () => {
    expect(idleTimeoutFor(10_000)).toBe(16_000);
    expect(idleTimeoutFor(30_000)).toBe(46_000);
    expect(statementTimeoutFor(10_000, 250)).toBe(2_000);
    expect(statementTimeoutFor(10_000, 30_000)).toBe(10_000);
    expect(statementTimeoutFor(5_000, 0)).toBe(5_000);
  });
});

for (const db of testDatabases().filter((d): d is Exclude<TestDatabase, 'sqlite'> => d !== 'sqlite')) {
  describe(`lock connection [${db}]`, () => {
    const open: TestInstance[] = [];
    const sources: DataSource[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((i) => i.close()));
      await Promise.all(sources.splice(0).map((d) => d.destroy().catch(() => undefined)));
      jest.restoreAllMocks();
    });

    /** `shared`: the locker on the application's pool (coordinationPool false), as before #31. */
    const start = async (type: 'lease-database' | 'database', poolSize: number, shared = false) => {
      const dataSource = await createTestDataSource(db, { poolSize });
      if (shared) configureCoordinationPool(dataSource, false);
      sources.push(dataSource);
      const instance = await lockerInstance({
        dataSource,
        tablePrefix: uniqueTablePrefix(`lk_pool_${db}`),
        schema: 'create',
        locker: { type },
        lockAcquireSleepInterval: 1_000,
        lockKeepAlivePeriod: 250,
        startup: 'block',
      });
      open.push(instance);
      await instance.init();
      return { dataSource, instance };
    };

    for (const type of ['lease-database', 'database'] as const) {
      it(`${type}: keep-alives are not starved while the application's work holds every other pooled connection`, async () => {
        const { dataSource, instance } = await start(type, 3);
        expect(instance.locker.isMaster).toBe(true);
        const before = instance.locker.lastKeepAlive!.getTime();
        const sql = sqlClientFor(dataSource);
        // Three 4 s statements on a pool of 3: every connection the application can get is busy
        // (the third waits, and may give up: the test DataSource bounds the wait at 3 s), for
        // four leases in a row.
        const busy = Promise.allSettled(
          Array.from({ length: 3 }, () => sql.query(statement(SLEEP_SQL[db](4)))),
        );
        await sleep(3_000);
        expect(instance.events.map((e) => e.type)).toEqual(['acquired']);
        expect(instance.locker.isMaster).toBe(true);
        expect(instance.locker.lastKeepAlive!.getTime()).toBeGreaterThan(before + 1_000);
        await busy;
        expect(instance.events.map((e) => e.type)).toEqual(['acquired']);
      });
    }

    it('a statement that starts while the connection is being closed runs on a new one (a lease released under a holder() read)', async () => {
      const dataSource = await createTestDataSource(db, { poolSize: 3 });
      sources.push(dataSource);
      const connection = new LockConnection(sqlClientFor(dataSource), 3_000);
      await connection.run('connect', (sql) => sql.query(statement('SELECT 1 AS one')));
      // The read starts, then the connection goes before it is sent: what the lease locker's
      // stop() did when a holder() read came in right after a demotion. The read used to be sent
      // on the closed connection and wait out its bound (LockStatementTimeoutError on MariaDB).
      const reading = connection.run('read', (sql) =>
        sql.query<{ one: unknown }>(statement('SELECT 1 AS one')),
      );
      connection.retire();
      expect((await reading).map((r) => Number(r.one))).toEqual([1]);
      // Statements already sent on a retired connection are answered before it closes.
      const slow = connection.run('slow', (sql) => sql.query(statement(SLEEP_SQL[db](0.2))));
      const queued = connection.run('queued', (sql) =>
        sql.query<{ two: unknown }>(statement('SELECT 2 AS two')),
      );
      await new Promise((resolve) => setImmediate(resolve));
      connection.retire();
      await slow;
      expect((await queued).map((r) => Number(r.two))).toEqual([2]);
      connection.destroy();
    });

    it('warns at startup when the pool it shares cannot spare a connection for the lock', async () => {
      const warn = jest.spyOn(Logger.prototype, 'warn');
      const { instance } = await start('lease-database', 1, true);
      await waitUntil(() => instance.locker.isMaster);
      const warnings = warn.mock.calls.map((c) => String(c[0]));
      expect(warnings.some((w) => /pool has 1 connection\(s\)/.test(w) && /Raise poolSize/.test(w))).toBe(
        true,
      );
    });

    it("on its own coordination pool (the default) the lock takes nothing of the application's pool of 1", async () => {
      const warn = jest.spyOn(Logger.prototype, 'warn');
      const { dataSource, instance } = await start('lease-database', 1);
      await waitUntil(() => instance.locker.isMaster);
      expect(warn.mock.calls.map((c) => String(c[0])).filter((w) => /Raise poolSize/.test(w))).toEqual([]);
      // The application's only connection is free for its own work while the lock is held.
      expect(await dataSource.query('SELECT 1 AS one')).toHaveLength(1);
    });
  });
}
