import type { SqlClient } from '@holdfast/core/kit';
import { tableName, statement } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import { HOLDFAST_TABLES } from '../src';
import { clockCheck, type DoctorReport } from '../src/commands/doctor.command';
import { cli, testDatabaseUrl } from './cli-support';

const TABLES = [...HOLDFAST_TABLES.map((t) => t.name), 'migrations'];

async function doctor(argv: string[], env: NodeJS.ProcessEnv) {
  const run = await cli(['doctor', '--json', ...argv], env);
  return { ...run, report: JSON.parse(run.stdout) as DoctorReport };
}

const statusOf = (report: DoctorReport, check: string) =>
  report.checks.filter((c) => c.check === check).map((c) => c.status);

describeEachDatabase(
  'holdfast doctor',
  (ctx) => {
    let env: NodeJS.ProcessEnv;
    let url: string;
    const t = (name: string) => tableName(ctx.prefix, name);

    beforeAll(async () => {
      url = testDatabaseUrl(ctx.db, ctx.dataSource);
      env = { DATABASE_URL: url, HOLDFAST_TABLE_PREFIX: ctx.prefix };
      expect((await cli(['migrate'], env)).stderr).toBe('');
    });

    it('finds nothing wrong with freshly migrated tables: exit 0, every check ok or skipped', async () => {
      const { code, report, stderr } = await doctor([], env);
      expect(stderr).toBe('');
      const expected = ['connect', 'clock', 'read-only', 'schema', 'connections'];
      if (ctx.db === 'postgres') expected.push('pgbouncer', 'listen');
      if (ctx.db === 'mariadb') expected.push('galera');
      expect(new Set(report.checks.map((c) => c.check))).toEqual(new Set(expected));
      // Behind test/pgbouncer/run.sh (transaction pooling) those two warn, as they should.
      const pooled = ctx.db === 'postgres' && process.env.HOLDFAST_TEST_PG_DIRECT_URL !== undefined;
      expect(
        report.checks.filter((c) => c.status !== 'ok' && c.status !== 'skipped').map((c) => c.check),
      ).toEqual(pooled ? ['pgbouncer', 'listen'] : []);
      if (pooled) return;
      expect(statusOf(report, 'schema')).toEqual(HOLDFAST_TABLES.map(() => 'ok'));
      expect(report).toMatchObject({ status: 'ok', dialect: ctx.db === 'mariadb' ? 'mariadb' : ctx.db });
      expect(code).toBe(0);
      // The text form says the same, one line per check.
      const text = await cli(['doctor'], env);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/^ok {3}schema: .*COR_MESSAGE: every column and index as expected$/m);
      expect(text.stdout).toMatch(/^ok: 0 failure\(s\), 0 warning\(s\)/m);
    });

    it('warns, exit 1, when no Holdfast table is under the prefix', async () => {
      const { code, report } = await doctor(['--prefix', 'TYPO_'], env);
      expect(statusOf(report, 'schema')).toEqual(['warning']);
      expect(report.checks.find((c) => c.check === 'schema')!.detail).toContain("prefix 'TYPO_'");
      expect(report.status).toBe('warning');
      expect(code).toBe(1);
    });

    it('checks the connection budget of a planned fleet against max_connections', async () => {
      const { code, report } = await doctor(['--instances', '100000', '--pool-size', '10'], env);
      if (ctx.db === 'sqlite') {
        expect(statusOf(report, 'connections')).toEqual(['skipped']);
        return;
      }
      expect(report.checks.find((c) => c.check === 'connections')).toMatchObject({
        status: 'failure',
        detail: expect.stringMatching(
          /100000 instance\(s\) × \(pool 10 \+ Holdfast's 3\) = 1300000 connection\(s\); the server allows \d+ \(max_connections \d+/,
        ),
        fix: expect.stringContaining('max_connections'),
      });
      expect(code).toBe(2);
      const fits = await doctor(['--instances', '1', '--pool-size', '1'], env);
      expect(statusOf(fits.report, 'connections')).toEqual(['ok']);
    });

    if (ctx.db === 'postgres') {
      it('fails a read-only primary (a session whose transactions are read-only)', async () => {
        // The server itself: PgBouncer drops a client's startup options.
        const server = process.env.HOLDFAST_TEST_PG_DIRECT_URL ?? url;
        const readOnly = `${server}${server.includes('?') ? '&' : '?'}options=${encodeURIComponent('-c default_transaction_read_only=on')}`;
        const { code, report } = await doctor([], { ...env, DATABASE_URL: readOnly });
        expect(report.checks.find((c) => c.check === 'read-only')).toMatchObject({
          status: 'failure',
          detail: expect.stringContaining('default_transaction_read_only is on'),
          fix: expect.stringContaining('primary'),
        });
        expect(code).toBe(2);
      });

      it('sees PgBouncer in transaction mode and its deaf LISTEN (test/pgbouncer/run.sh), neither on the server itself', async () => {
        // Set by test/pgbouncer/run.sh: HOLDFAST_TEST_PG_URL is then the bouncer, this the server.
        const direct = process.env.HOLDFAST_TEST_PG_DIRECT_URL;
        const { report } = await doctor([], env);
        const check = (name: string) => report.checks.find((c) => c.check === name);
        if (direct) {
          expect(check('pgbouncer')).toMatchObject({
            status: 'warning',
            detail: expect.stringContaining('a pooler in transaction mode'),
            fix: expect.stringContaining('notifyListenUrl'),
          });
          expect(check('listen')).toMatchObject({
            status: 'warning',
            detail: expect.stringContaining('not heard'),
          });
          // The inbox's notifyListenUrl pointed at the server: heard.
          const fixed = await doctor(['--listen-url', direct], env);
          expect(fixed.report.checks.find((c) => c.check === 'listen')).toMatchObject({ status: 'ok' });
        } else {
          expect(check('pgbouncer')).toMatchObject({
            status: 'ok',
            detail: expect.stringContaining('one server process'),
          });
          expect(check('listen')).toMatchObject({ status: 'ok' });
        }
      });

      it('warns when the LISTEN path hears nothing, or cannot connect (--listen-url)', async () => {
        // LISTEN on another database of the same server: it succeeds and hears nothing, as
        // behind PgBouncer in transaction mode.
        const elsewhere = url.replace(/\/[^/?]+(\?|$)/, '/postgres$1');
        const deaf = await doctor(['--listen-url', elsewhere], env);
        expect(deaf.report.checks.find((c) => c.check === 'listen')).toMatchObject({
          status: 'warning',
          detail: expect.stringMatching(/not heard within \d+ ms by LISTEN through/),
          fix: expect.stringContaining('notifyListenUrl'),
        });
        expect(deaf.code).toBe(1);
        const closed = await doctor(['--listen-url', 'postgres://postgres@127.0.0.1:25739/none'], env);
        expect(closed.report.checks.find((c) => c.check === 'listen')).toMatchObject({
          status: 'warning',
          detail: expect.stringContaining('failed'),
        });
      });
    }

    if (ctx.db === 'mariadb') {
      it('sees no Galera cluster on the test MariaDB, whatever the locker', async () => {
        const { report } = await doctor(['--locker', 'database'], env);
        expect(report.checks.find((c) => c.check === 'galera')).toMatchObject({
          status: 'ok',
          detail: expect.stringContaining('not a Galera cluster node'),
        });
      });
    }

    // Last: it leaves the tables drifted.
    it('reports schema drift: a missing column is a failure (exit 2), a missing index a warning', async () => {
      const lock = t('HOLDFAST_LOCK');
      await ctx.sql.execute(statement(`DROP TABLE ${lock}`));
      // Without BROKER_NAME: the locker refuses to start on it.
      await ctx.sql.execute(
        statement(`CREATE TABLE ${lock} (ID varchar(64) NOT NULL PRIMARY KEY, TIME bigint)`),
      );
      const message = HOLDFAST_TABLES.find((s) => s.name === 'COR_MESSAGE')!;
      const index = message.indexes![0];
      const indexName = `${ctx.prefix}${index.name}`;
      await ctx.sql.execute(
        statement(
          ctx.db === 'mariadb' ? `DROP INDEX ${indexName} ON ${t('COR_MESSAGE')}` : `DROP INDEX ${indexName}`,
        ),
      );
      const { code, report } = await doctor([], env);
      expect(code).toBe(2);
      expect(report.status).toBe('failure');
      const schema = report.checks.filter((c) => c.check === 'schema');
      expect(schema.find((c) => c.detail.startsWith(`${lock}:`))).toMatchObject({
        status: 'failure',
        detail: expect.stringContaining('BROKER_NAME'),
        fix: expect.any(String),
      });
      expect(schema.find((c) => c.detail.startsWith(`${t('COR_MESSAGE')}:`))).toMatchObject({
        status: 'warning',
        detail: expect.stringContaining(indexName),
        fix: expect.stringContaining('holdfast ddl'),
      });
    });

    it('refuses an unknown --locker as bad usage (exit 2, a JSON error)', async () => {
      const { code, report } = await doctor(['--locker', 'zookeeper'], env);
      expect(code).toBe(2);
      expect(report).toEqual({
        error: { code: 'HOLDFAST_CLI_USAGE', message: expect.stringContaining('--locker must be one of') },
      });
    });
  },
  { tables: TABLES },
);

describe('holdfast doctor without a database', () => {
  it('reports an unreachable server as a failed connect check (exit 2), JSON on stdout', async () => {
    const { code, stdout } = await cli(['doctor', '--json'], {
      DATABASE_URL: 'postgres://nobody:secret@127.0.0.1:25739/none',
    });
    expect(code).toBe(2);
    const report = JSON.parse(stdout) as DoctorReport;
    expect(report).toMatchObject({
      status: 'failure',
      database: 'postgres://nobody:***@127.0.0.1:25739/none',
      checks: [{ check: 'connect', status: 'failure', detail: expect.stringContaining('ECONNREFUSED') }],
    });
    expect(stdout).not.toContain('secret');
  });

  it('compares the clocks: a database 8 s ahead is a failure, 2 s a warning, 0 ok', async () => {
    const at = (offset: number) =>
      ({
        dialect: { name: 'postgres', nowMillis: 'now_ms' },
        query: async () => [{ now_ms: Date.now() + offset }],
      }) as unknown as SqlClient;
    const ahead = await clockCheck(at(8_000), 1_000);
    expect(ahead).toMatchObject({
      status: 'failure',
      detail: expect.stringMatching(/clock is \d+ ms ahead of this host's/),
      fix: expect.stringContaining('NTP'),
    });
    // The check takes the middle of its round trip as this host's time, and the database's answer
    // falls anywhere in that trip: 8 s give or take half of it on a busy machine (7,998 ms in CI).
    const ms = Number(/clock is (\d+) ms/.exec(ahead.detail)![1]);
    expect(Math.abs(ms - 8_000)).toBeLessThan(1_000);
    expect(await clockCheck(at(-2_000), 1_000)).toMatchObject({
      status: 'warning',
      detail: expect.stringContaining('behind'),
    });
    expect(await clockCheck(at(0), 1_000)).toMatchObject({ status: 'ok' });
  });
});
