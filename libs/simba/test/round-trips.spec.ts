import type { DataSource } from 'typeorm';
import { SchemaManager, sqlClientFor, type SqlClient, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  TcpProxy,
  testServerDatabases,
  testServerUrl,
  uniqueTablePrefix,
  type TestDatabase,
} from '@holdfast/testing';
import { MutexQueryResolver } from '../src/internal';
import { MutexRepository } from '../src/mutex/mutex.repository';
import { SIMBA_TABLES } from '../src';

/**
 * PostgreSQL and MariaDB only (left out of the run otherwise, see jest.config.js).
 * A Simba round (acquire or renew, then read the rows with the database clock) through a
 * TcpProxy that counts round trips: one on each server (PostgreSQL: one statement of
 * data-modifying CTEs, its own transaction; MariaDB: one compound statement sent with the
 * transaction's opening and COMMIT). Counts only, no timing.
 */
/** The server's own end of a statement that waited too long for a lock (not the client's bound). */
const SERVER_WAIT_BOUND: Partial<Record<TestDatabase, string[]>> = {
  postgres: ['55P03', '57014'], // lock_timeout, statement_timeout
  mariadb: ['ER_LOCK_WAIT_TIMEOUT', 'ER_STATEMENT_TIMEOUT'], // innodb_lock_wait_timeout, max_statement_time
};

/** The driver's code of `error` (TypeORM wraps it as `driverError`). */
function errorCode(error: unknown): unknown {
  const e = error as { code?: unknown; driverError?: { code?: unknown } } | undefined;
  return e?.driverError?.code ?? e?.code;
}

/**
 * The error of the next session or transaction `client` runs (a round's first try: PostgreSQL
 * sends it on a session, MariaDB in a transaction), once it fails.
 */
function firstFailure(client: SqlClient): Promise<unknown> {
  return new Promise((resolve) => {
    for (const method of ['session', 'transaction'] as const) {
      const original = client[method].bind(client) as (work: never) => Promise<unknown>;
      jest.spyOn(client, method).mockImplementationOnce(((work: never) => {
        const run = original(work);
        run.catch(resolve);
        return run;
      }) as never);
    }
  });
}

jest.setTimeout(60_000);

for (const db of testServerDatabases()) {
  describe(`Simba round through a proxy: round trips [${db}]`, () => {
    let proxy: TcpProxy;
    let dataSource: DataSource;
    let sql: SqlClient;
    let repository: MutexRepository;
    const prefix = uniqueTablePrefix('rt');

    beforeAll(async () => {
      const url = testServerUrl(db);
      proxy = new TcpProxy(Number(url.port), url.hostname);
      dataSource = await createTestDataSource(db, { port: await proxy.start() });
      sql = sqlClientFor(dataSource);
      await new SchemaManager(sql).apply(SIMBA_TABLES.mutex, prefix, 'create');
      repository = new MutexRepository(sql, new MutexQueryResolver(sql.dialect, prefix), 5_000);
    });

    afterAll(async () => {
      if (dataSource?.isInitialized) {
        await sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}simba_mutex`));
        await dataSource.destroy();
      }
      await proxy?.stop();
    });

    const round = (mutex: string, renew: boolean, attempt: 'acquire' | 'peek' = 'acquire') =>
      repository.batch([{ mutex, contenderId: 'me', attempt, renew, ttl: 10_000, transition: 2_000 }]);

    it('takes, then renews, a mutex in 1 round trip each; a look at it is 1 too', async () => {
      const counts: number[] = [];
      const owners: (string | undefined)[] = [];
      await round('rt', false); // the row exists and the pool's connection is open before counting
      for (const [renew, attempt] of [
        [false, 'acquire'],
        [true, 'acquire'],
        [true, 'acquire'],
        [false, 'peek'],
      ] as const) {
        await proxy.quiet();
        proxy.resetRoundTrips();
        const { rows } = await round('rt', renew, attempt);
        await proxy.quiet();
        counts.push(proxy.roundTrips);
        owners.push(rows.get('rt')?.ownerId);
      }
      expect(owners).toEqual(['me', 'me', 'me', 'me']);
      expect(counts).toEqual([1, 1, 1, 1]);
    });

    it("a round's wait for a row another transaction holds is ended by the server within the statement timeout", async () => {
      const table = `${prefix}simba_mutex`;
      const bounded = new MutexRepository(sql, new MutexQueryResolver(sql.dialect, prefix), 1_000);
      const take = {
        mutex: 'held',
        contenderId: 'me',
        attempt: 'acquire',
        renew: false,
        ttl: 10_000,
        transition: 2_000,
      } as const;
      await bounded.batch([take]);
      // Free (its transition long past), so that the round below means to take it.
      await sql.execute(
        statement(`UPDATE ${table} SET owner_id = '', transition_at = 0, ttl_at = 0 WHERE mutex = 'held'`),
      );
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      // Another transaction (an application's, or a frozen Java Simba's) holds the row.
      const holder = sql.transaction(async (tx) => {
        await tx.execute(statement(`UPDATE ${table} SET version = version + 1 WHERE mutex = 'held'`));
        locked();
        await released;
      });
      let round: Promise<unknown> | undefined;
      try {
        await isLocked;
        const firstTry = firstFailure(sql);
        // The client's bound is far away: only the server can end the first try's wait soon (the
        // tries after it, retried as a lock conflict, end with the holder).
        round = bounded.batch([take], 60_000).catch(() => undefined);
        let timer: NodeJS.Timeout | undefined;
        const ended = await Promise.race([
          firstTry.then(errorCode),
          new Promise((resolve) => (timer = setTimeout(() => resolve('still waiting after 20 s'), 20_000))),
        ]).finally(() => clearTimeout(timer));
        expect(SERVER_WAIT_BOUND[db]).toContain(ended);
      } finally {
        jest.restoreAllMocks();
        release();
        await holder;
        await round;
      }
      // Nothing of the failed try stayed behind: a round takes the row.
      const { rows } = await bounded.batch([take]);
      expect(rows.get('held')?.ownerId).toBe('me');
    });
  });
}
