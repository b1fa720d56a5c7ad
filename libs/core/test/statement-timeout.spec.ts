import {
  InvalidDurationError,
  SqlTimeoutError,
  isConnectionError,
  sqlClientFor,
  statement,
} from '@holdfast/core/kit';
import { createTestDataSource, describeEachDatabase, TcpProxy, waitUntil } from '@holdfast/testing';
import type { DataSource } from 'typeorm';

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
 * A SqlClient with `statementTimeout` never waits forever on a silent network path: a statement
 * or a transaction whose connection went silent fails with a SqlTimeoutError, the connection is
 * destroyed (not returned to the pool), and once the path is back the client works again.
 */
describeEachDatabase('a bounded SqlClient on a silent connection', (ctx) => {
  it('rejects an invalid bound, naming the option', () => {
    expect(() => sqlClientFor(ctx.dataSource, undefined, undefined, { statementTimeout: 'soon' })).toThrow(
      InvalidDurationError,
    );
  });

  it('runs as before while the database answers', async () => {
    const sql = sqlClientFor(ctx.dataSource, undefined, undefined, { statementTimeout: 5_000 });
    const [row] = await sql.query<{ n: unknown }>(statement(sql.dialect.selectRow('1 AS n')));
    expect(Number(row.n)).toBe(1);
    expect(await sql.transaction(async (tx) => Number((await tx.nowMillis()) > 0))).toBe(1);
  });

  if (ctx.db === 'sqlite') return;
  const db = ctx.db;

  it('times out, destroys the silent connections, and works again after the restore', async () => {
    const proxy = new TcpProxy(serverPort(db));
    let viaProxy: DataSource | undefined;
    try {
      await proxy.start();
      viaProxy = await createTestDataSource(db, { port: proxy.port, poolSize: 3 });
      const sql = sqlClientFor(viaProxy, undefined, undefined, { statementTimeout: 3_000 });
      const one = sql.dialect.selectRow('1 AS n');
      // Three pooled connections, each of which has answered.
      await Promise.all([1, 2, 3].map(() => sql.transaction((tx) => tx.query(statement(one)))));
      expect(proxy.connections).toBeGreaterThan(0);

      proxy.blackhole({ passCloses: false });
      const single = await sql.query(statement(one)).catch((e: unknown) => e);
      expect(single).toBeInstanceOf(SqlTimeoutError);
      expect(isConnectionError(single)).toBe(true);
      const transaction = await sql.transaction((tx) => tx.query(statement(one))).catch((e: unknown) => e);
      // A silent pooled connection times out, or, suspect after the first timeout, is destroyed
      // and a new one is refused by the blackholed path.
      expect(isConnectionError(transaction)).toBe(true);

      proxy.restore();
      // Within a bound or two: no silent connection is waited on again.
      await waitUntil(async () => (await sql.query(statement(one))).length === 1, {
        timeout: 20_000,
        message: 'a statement to answer after the restore',
      });
      expect(await sql.transaction(async (tx) => (await tx.query(statement(one))).length)).toBe(1);
    } finally {
      await proxy.stop();
      await viaProxy?.destroy().catch(() => undefined);
    }
  }, 60_000);
});
