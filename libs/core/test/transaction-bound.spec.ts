import { DataSource, type DataSourceOptions } from 'typeorm';
import { monotonicMillis, sqlClientFor, type SqlClient, statement } from '@holdfast/core/kit';
import { isTransientConflictError } from '../src/database/sql-errors';
import {
  createTestDataSource,
  describeEachDatabase,
  TcpProxy,
  testDataSourceOptions,
  waitUntil,
} from '@holdfast/testing';

const BOUND_MS = 2_000;

/** The server's port for a test database (the proxy's target). */
function serverPort(db: 'postgres' | 'mariadb'): number {
  const url = new URL(
    db === 'postgres'
      ? (process.env.HOLDFAST_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test')
      : (process.env.HOLDFAST_TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test'),
  );
  return Number(url.port || (db === 'postgres' ? 5432 : 3306));
}

/**
 * Every transaction a SqlClient opens is ended by the server when its client goes quiet inside
 * it: the client reaches the database through a proxy that stops forwarding (sockets open,
 * nothing passes) right after taking a row lock, and a second connection watches the server
 * end that session and free the row.
 */
describeEachDatabase(
  'the server bounds an idle transaction',
  (ctx) => {
    const t = () => `${ctx.prefix}CORE_BOUND`;

    beforeAll(async () => {
      await ctx.sql.execute(
        statement(`CREATE TABLE ${t()} (ID VARCHAR(8) NOT NULL PRIMARY KEY, N INT NOT NULL)`),
      );
      await ctx.sql.execute(statement(`INSERT INTO ${t()} (ID, N) VALUES ('a', 0)`));
    });

    it('rejects an invalid bound, naming the option', () => {
      expect(() =>
        sqlClientFor(ctx.dataSource, undefined, undefined, { idleInTransactionTimeout: 'soon' }),
      ).toThrow(`Invalid duration for 'idleInTransactionTimeout': "soon"`);
    });

    if (ctx.db === 'sqlite') return;
    const db = ctx.db;

    it('shows the bound on the server inside a transaction (default 30 s), and not after it', async () => {
      // One connection, so "after" looks at the very session the transaction used.
      const single = await new DataSource(
        testDataSourceOptions(db, { poolSize: 1 }) as DataSourceOptions,
      ).initialize();
      try {
        const sql = sqlClientFor(single);
        const read = async (client: SqlClient) =>
          db === 'postgres'
            ? String(
                (
                  await client.query<{ v: string }>(
                    statement('SELECT current_setting($1) AS v', ['idle_in_transaction_session_timeout']),
                  )
                )[0].v,
              )
            : String(
                (
                  await client.query<{ v: unknown }>(
                    statement('SELECT @@SESSION.idle_transaction_timeout AS v'),
                  )
                )[0].v,
              );
        const outside = await read(sql);
        expect(await sql.transaction(read)).toBe(db === 'postgres' ? '30s' : '30');
        expect(await read(sql)).toBe(outside);
        const custom = sqlClientFor(single, undefined, undefined, { idleInTransactionTimeout: '2500ms' });
        expect(await custom.transaction(read)).toBe(db === 'postgres' ? '2500ms' : '3');
        const off = sqlClientFor(single, undefined, undefined, { idleInTransactionTimeout: 0 });
        expect(await off.transaction(read)).toBe(outside);
      } finally {
        await single.destroy();
      }
    });

    it(`ends a transaction whose client went silent within the bound (${BOUND_MS} ms), freeing its row locks`, async () => {
      const proxy = new TcpProxy(serverPort(db));
      await proxy.start();
      const silent = await createTestDataSource(db, { port: proxy.port, poolSize: 2 });
      const sql = sqlClientFor(silent, undefined, undefined, { idleInTransactionTimeout: BOUND_MS });
      let session!: string;
      let wentSilent!: () => void;
      const isSilent = new Promise<void>((resolve) => (wentSilent = resolve));
      const holder = sql
        .transaction(async (tx) => {
          await tx.execute(statement(`UPDATE ${t()} SET N = N + 1 WHERE ID = 'a'`));
          const [row] = await tx.query<{ id: unknown }>(
            statement(db === 'postgres' ? 'SELECT pg_backend_pid() AS id' : 'SELECT CONNECTION_ID() AS id'),
          );
          session = String(row.id);
          proxy.blackhole();
          wentSilent();
          await tx.query(statement('SELECT 1')); // never arrives
        })
        .catch((error: unknown) => error);
      try {
        await isSilent;
        const silentAt = monotonicMillis();
        // The watcher sees the silent session holding a transaction with row locks...
        const holding = async (): Promise<boolean> => {
          if (db === 'postgres') {
            const [row] = await ctx.sql.query<{ c: unknown }>(
              statement(
                'SELECT COUNT(*) AS c FROM pg_stat_activity WHERE pid = $1 AND backend_xid IS NOT NULL',
                [session],
              ),
            );
            return Number(row.c) > 0;
          }
          // Not information_schema.innodb_trx: MariaDB refreshes that snapshot only after 0.1 s
          // in which nobody read it, so frequent readers (a poll, other tests) keep it stale.
          // A NOWAIT lock attempt asks InnoDB directly.
          return ctx.sql.query(statement(`SELECT ID FROM ${t()} WHERE ID = 'a' FOR UPDATE NOWAIT`)).then(
            () => false,
            (error: unknown) => {
              if (isTransientConflictError(error)) return true;
              throw error;
            },
          );
        };
        await waitUntil(holding, { timeout: 5_000, message: 'the silent transaction to hold its row lock' });
        // ...until the server ends it, within the bound (generous margin for a busy machine).
        await waitUntil(async () => !(await holding()), {
          timeout: BOUND_MS + 20_000,
          interval: 100,
          message: 'the server to end the silent transaction',
        });
        const endedAfter = monotonicMillis() - silentAt;
        expect(endedAfter).toBeGreaterThanOrEqual(BOUND_MS / 2);
        // The session itself is gone, and the row is free for others at once.
        await waitUntil(
          async () =>
            (db === 'postgres'
              ? await ctx.sql.query(statement('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [session]))
              : await ctx.sql.query(
                  statement('SELECT 1 FROM information_schema.processlist WHERE ID = ?', [session]),
                )
            ).length === 0,
          { timeout: 10_000, message: 'the silent session to be gone' },
        );
        expect(await ctx.sql.execute(statement(`UPDATE ${t()} SET N = N + 10 WHERE ID = 'a'`))).toBe(1);
        const [row] = await ctx.sql.query<{ n: unknown }>(
          statement(`SELECT N AS n FROM ${t()} WHERE ID = 'a'`),
        );
        expect(Number(row.n)).toBe(10); // the silent transaction's update was rolled back
      } finally {
        await proxy.stop();
        expect(await holder).toBeInstanceOf(Error);
        await silent.destroy();
      }
    });
  },
  { tables: ['CORE_BOUND'] },
);
