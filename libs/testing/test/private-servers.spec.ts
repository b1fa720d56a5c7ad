import { DataSource, type DataSourceOptions } from 'typeorm';
import { sqlClientFor, type SqlClient, statement } from '@holdfast/core/kit';
import {
  type PrivateServer,
  PrivateMariadb,
  PrivatePostgres,
  postgresBinDir,
  testDatabases,
  testDataSourceOptions,
  waitUntil,
} from '@holdfast/testing';

// Ports of this suite (core's private range): PostgreSQL 25460, MariaDB 25461.
const SERVERS = {
  postgres: () => new PrivatePostgres({ port: 25460 }),
  mariadb: () => new PrivateMariadb({ port: 25461 }),
} as const;

/** A DataSource on a private server, with the test databases' usual options. */
async function dataSourceFor(db: 'postgres' | 'mariadb', server: PrivateServer): Promise<DataSource> {
  const options = { ...testDataSourceOptions(db), url: server.url } as DataSourceOptions;
  return new DataSource(options).initialize();
}

async function answers(sql: SqlClient): Promise<boolean> {
  const [row] = await sql.query<{ one: unknown }>(statement('SELECT 1 AS one'));
  return Number(row.one) === 1;
}

describe('private database servers', () => {
  it('finds the PostgreSQL binaries, or takes them from HOLDFAST_PG_BIN', () => {
    expect(postgresBinDir({ HOLDFAST_PG_BIN: '/opt/pg/bin' })).toBe('/opt/pg/bin');
    expect(postgresBinDir({})).toMatch(/^\/usr\/lib\/postgresql\/\d+\/bin$/);
  });

  for (const db of testDatabases().filter((d): d is 'postgres' | 'mariadb' => d !== 'sqlite')) {
    it(`[${db}] starts, restarts, crashes, pauses and stops; the client reconnects every time`, async () => {
      const server = SERVERS[db]();
      let dataSource: DataSource | undefined;
      try {
        await server.start();
        expect(server.pid).toEqual(expect.any(Number));
        dataSource = await dataSourceFor(db, server);
        const sql = sqlClientFor(dataSource);
        expect(await answers(sql)).toBe(true);
        await sql.execute(statement('CREATE TABLE kept (id INT PRIMARY KEY)'));
        await sql.execute(statement('INSERT INTO kept (id) VALUES (1)'));
        const reconnected = (what: string) =>
          waitUntil(() => answers(sql), {
            timeout: 30_000,
            interval: 200,
            message: `a query after the ${what}`,
          });

        // pg_ctl restart -m immediate (PostgreSQL) / SIGKILL and start (MariaDB)
        const before = server.pid;
        await server.restart();
        expect(server.pid).not.toBe(before);
        await reconnected('restart');

        // kill -9 of every server process, then start: committed rows survive
        await server.crash();
        await reconnected('crash');
        expect(await sql.query(statement('SELECT id FROM kept'))).toHaveLength(1);

        // SIGSTOP: a query hangs (connections stay open) until SIGCONT
        await server.pause();
        // How the query settled, if it did (a failure names what answered it: an error, a value).
        let settled: { value: boolean } | { error: string } | undefined;
        const pending = answers(sql).then(
          (value) => (settled = { value }),
          (error: Error) => (settled = { error: `${error.name}: ${error.message}` }),
        );
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        expect(settled).toBeUndefined();
        server.resume();
        expect(await pending).toEqual({ value: true });

        // a clean stop: queries fail; start: they work again
        await server.stop();
        await expect(answers(sql)).rejects.toBeDefined();
        await server.start();
        await reconnected('stop and start');
      } finally {
        await dataSource?.destroy().catch(() => undefined);
        await server.destroy();
      }
      expect(server.pid).toBeUndefined();
    }, 180_000);
  }
});
