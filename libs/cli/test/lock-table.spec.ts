/**
 * `holdfast status` and `holdfast release lock` on a lock table of its own name and columns
 * (LockerModule's `lockTableName` and `lockColumns`): --lock-table and --lock-columns.
 */
import { TIMELINE_MARKER, statement } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import { lockerInstance, type TestInstance } from '../../locker/test/locker-test-kit';
import { HOLDFAST_TABLES, type HoldfastStatus } from '../src';
import type { ReleaseReport } from '../src/commands/release.command';
import { cli, insert, testDatabaseUrl } from './cli-support';

jest.setTimeout(60_000);

const LOCK_TABLE = 'APP_LOCKS';
const COLUMNS = 'LOCK_KEY,EXPIRES_AT,OWNER';
const custom = ['--lock-table', LOCK_TABLE, '--lock-columns', COLUMNS];

describeEachDatabase(
  'holdfast status and release lock on a custom lock table',
  (ctx) => {
    let env: NodeJS.ProcessEnv;
    const table = () => `${ctx.prefix}${LOCK_TABLE}`;
    const open: TestInstance[] = [];

    beforeAll(async () => {
      env = { DATABASE_URL: testDatabaseUrl(ctx.db, ctx.dataSource), HOLDFAST_TABLE_PREFIX: ctx.prefix };
      await ctx.sql.execute(
        statement(
          `CREATE TABLE ${table()} (LOCK_KEY VARCHAR(64) NOT NULL, EXPIRES_AT BIGINT, OWNER VARCHAR(250), PRIMARY KEY (LOCK_KEY))`,
        ),
      );
    });
    beforeEach(() => ctx.sql.execute(statement(`DELETE FROM ${table()}`)));
    afterEach(async () => {
      await Promise.all(open.splice(0).map((i) => i.close()));
    });

    it('status shows the master a LockerModule with lockTableName and lockColumns keeps in its table', async () => {
      const instance = await lockerInstance({
        dataSource: ctx.dataSource,
        locker: { type: 'lease-database' },
        tablePrefix: ctx.prefix,
        lockTableName: LOCK_TABLE,
        lockColumns: { id: 'LOCK_KEY', time: 'EXPIRES_AT', brokerName: 'OWNER' },
        lockName: 'reports',
        schema: 'check',
        startup: 'block',
      });
      open.push(instance);
      await instance.init();
      expect(instance.locker.isMaster).toBe(true);

      const { code, stdout, stderr } = await cli(['status', '--json', ...custom], env);
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      const status = JSON.parse(stdout) as HoldfastStatus;
      expect(status.masters?.map(({ lock, master }) => ({ lock, master }))).toEqual([
        { lock: 'reports', master: instance.locker.instanceId },
      ]);
      expect(status.masters?.[0].timeFromNowMs).toBeGreaterThan(0);
      // The other tables are not there: their sections are empty, not an error.
      expect(status.owners).toBeNull();

      const text = await cli(['status', ...custom], env);
      expect(text.stdout).toContain(instance.locker.instanceId);
    });

    it('release lock frees a row of the custom table only from the owner named', async () => {
      const now = await ctx.sql.nowMillis();
      await insert(ctx.sql, table(), { LOCK_KEY: 'broker', OWNER: 'node-dead', EXPIRES_AT: now + 60_000 });
      const release = async (argv: string[]) => {
        const { code, stdout } = await cli(['release', 'lock', ...argv, ...custom, '--json'], env);
        return { code, report: JSON.parse(stdout) as ReleaseReport };
      };
      expect(await release(['broker', '--owner', 'node-live'])).toEqual({
        code: 1,
        report: { kind: 'lock', name: 'broker', owner: 'node-live', heldBy: 'node-dead', result: 'not held' },
      });
      expect((await release(['broker', '--owner', 'node-dead', '--dry-run'])).report.result).toBe('would');
      expect((await release(['nope', '--owner', 'node-dead'])).report.result).toBe('not found');

      const text = await cli(['release', 'lock', 'broker', '--owner', 'node-dead', ...custom], {
        ...env,
        HOLDFAST_ACTOR: 'alice',
      });
      expect(text).toEqual({
        code: 0,
        stdout: "released lock 'broker' (held by 'node-dead')\n",
        stderr: `holdfast audit: alice release lock 'broker' of owner 'node-dead' in ${table()} on ${env.DATABASE_URL}: released\n`,
      });
      const [row] = await ctx.sql.query<Record<string, unknown>>(
        statement(`SELECT OWNER AS owner, EXPIRES_AT AS expires_at FROM ${table()}`),
      );
      expect(row).toEqual({ owner: null, expires_at: null });
    });

    it('without --lock-table, neither command sees the custom table', async () => {
      const now = await ctx.sql.nowMillis();
      await insert(ctx.sql, table(), { LOCK_KEY: 'broker', OWNER: 'node-dead', EXPIRES_AT: now + 60_000 });
      const status = await cli(['status', '--json'], env);
      expect(status.code).toBe(1);
      expect(status.stdout).toContain('HOLDFAST_CLI_NO_TABLES');
      // The release reads HOLDFAST_LOCK, which is not there: the database's own error.
      const released = await cli(['release', 'lock', 'broker', '--owner', 'node-dead', '--json'], env);
      expect(released.code).toBe(1);
      expect((JSON.parse(released.stdout) as { error: { message: string } }).error.message).toMatch(
        /holdfast_lock/i,
      );
      expect(
        (await ctx.sql.query(statement(`SELECT OWNER AS owner FROM ${table()}`))).map((r) => r.owner),
      ).toEqual(['node-dead']);
    });

    if (ctx.db === 'postgres') {
      it("release lock carries the locker's failover grace guard: after a promotion it releases nothing and starts the grace", async () => {
        expect((await cli(['migrate'], env)).code).toBe(0);
        const locks = `${ctx.prefix}HOLDFAST_LOCK`;
        const now = await ctx.sql.nowMillis();
        await insert(ctx.sql, locks, { ID: 'broker', BROKER_NAME: 'node-dead', TIME: now + 60_000 });
        // The marker names a timeline this server is not on: the table was last written before a promotion.
        await insert(ctx.sql, locks, { ID: TIMELINE_MARKER, BROKER_NAME: TIMELINE_MARKER, TIME: 987_654 });
        const { code, stdout } = await cli(
          ['release', 'lock', 'broker', '--owner', 'node-dead', '--json'],
          env,
        );
        expect({ code, result: (JSON.parse(stdout) as ReleaseReport).result }).toEqual({
          code: 1,
          result: 'not held',
        });
        const rows = await ctx.sql.query<{ id: string; holder: string | null }>(
          statement(`SELECT ID AS id, BROKER_NAME AS holder FROM ${locks} ORDER BY ID`),
        );
        // In grace (the locker's own holder for it), not released; the marker moved to this timeline.
        expect(rows.find((r) => r.id === 'broker')?.holder).toBe('holdfast:failover-grace');
        const [marker] = await ctx.sql.query<{ time: unknown }>(
          statement(`SELECT TIME AS time FROM ${locks} WHERE ID = $1`, [TIMELINE_MARKER]),
        );
        expect(Number(marker.time)).not.toBe(987_654);
        // Now the release of the row in grace by its grace holder goes through (the documented way to end it).
        const ended = await cli(
          ['release', 'lock', 'broker', '--owner', 'holdfast:failover-grace', '--json'],
          env,
        );
        expect((JSON.parse(ended.stdout) as ReleaseReport).result).toBe('released');
      });
    }

    it.each([
      [
        ['status', '--lock-columns', 'A,B'],
        2,
        'HOLDFAST_CLI_USAGE',
        '--lock-columns takes the id, time and holder columns',
      ],
      [
        ['status', '--lock-table', 'LOCKS; DROP TABLE x'],
        1,
        'HOLDFAST_CORE_INVALID_OPTIONS',
        "lockTableName 'LOCKS; DROP TABLE x'",
      ],
      [
        ['status', '--lock-table', 'LOCKS', '--lock-columns', 'ID,TIME--,HOLDER'],
        1,
        'HOLDFAST_CORE_INVALID_OPTIONS',
        "lockColumns.time 'TIME--'",
      ],
      [
        ['release', 'mutex', 'orders', '--owner', 'x', '--lock-table', 'LOCKS'],
        2,
        'HOLDFAST_CLI_USAGE',
        '--lock-table and --lock-columns go with release lock',
      ],
    ])('%j is refused (exit %d, %s) naming what is wrong', async (argv, exit, code, message) => {
      const result = await cli([...argv, '--json'], env);
      expect(result.code).toBe(exit);
      const error = (JSON.parse(result.stdout) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe(code);
      expect(error.message).toContain(message);
    });
  },
  { tables: [LOCK_TABLE, ...HOLDFAST_TABLES.map((t) => t.name), 'migrations'], tag: 'clt' },
);
