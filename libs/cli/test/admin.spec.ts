import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tableName, statement } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import { FAR_FUTURE } from '@holdfast/inbox/internal';
import { HOLDFAST_TABLES } from '../src';
import type { MessagesReport } from '../src/commands/messages.command';
import type { ReleaseReport } from '../src/commands/release.command';
import { cli, insert, testDatabaseUrl } from './cli-support';

const repo = join(__dirname, '..', '..', '..');

describeEachDatabase(
  'holdfast messages and holdfast release',
  (ctx) => {
    let env: NodeJS.ProcessEnv;
    let now: number;
    const t = (name: string) => tableName(ctx.prefix, name);
    const at = (ms: number) => ctx.sql.dialect.timestampParam(new Date(ms));

    /** RETRIES and NEXT_RETRY of a message as stored (null: no such row). */
    const stored = async (id: string) => {
      const [row] = await ctx.sql.query<{ retries: unknown; next_retry: unknown }>(
        statement(
          `SELECT RETRIES AS retries, NEXT_RETRY AS next_retry FROM ${t('COR_MESSAGE')} WHERE ID = ${ctx.sql.dialect.placeholder(1)}`,
          [id],
        ),
      );
      if (!row) return null;
      const next = row.next_retry === null ? null : ctx.sql.dialect.readTimestamp(row.next_retry).getTime();
      return { retries: Number(row.retries), nextRetry: next };
    };
    const report = (stdout: string) => JSON.parse(stdout) as MessagesReport;

    beforeAll(async () => {
      env = {
        DATABASE_URL: testDatabaseUrl(ctx.db, ctx.dataSource),
        HOLDFAST_TABLE_PREFIX: ctx.prefix,
        HOLDFAST_INBOX_MAX_RETRIES: '3',
      };
      const migrated = await cli(['migrate'], env);
      expect(migrated.stderr).toBe('');
    });

    beforeEach(async () => {
      await ctx.sql.execute(statement(`DELETE FROM ${t('COR_MESSAGE')}`));
      now = await ctx.sql.nowMillis();
      const message = (id: string, name: string, inserted: number, extra: Record<string, unknown> = {}) =>
        insert(ctx.sql, t('COR_MESSAGE'), {
          ID: id,
          PAYLOAD_ENCODING: 'jackson',
          PAYLOAD_TYPE_NAMESPACE: 'shop',
          PAYLOAD_TYPE_NAME: name,
          INSERTED: at(inserted),
          RETRIES: 0,
          ...extra,
        });
      await message('due', 'order', now - 60_000);
      // Exhausted under maxRetries 3 whatever NEXT_RETRY says (camunda-bpm-correlate's rule).
      await message('parked-1', 'order', now - 50_000, {
        RETRIES: 3,
        NEXT_RETRY: at(now - 1_000),
        ERROR: 'x',
      });
      await message('parked-2', 'order', now - 40_000, { RETRIES: 4, ERROR: 'x' });
      await message('parked-other', 'refund', now - 30_000, { RETRIES: 3, ERROR: 'x' });
      await message('paused', 'order', now - 20_000, { RETRIES: 1, NEXT_RETRY: at(FAR_FUTURE) });
      await message('paused-fresh', 'order', now - 10_000, { NEXT_RETRY: at(FAR_FUTURE) });
    });

    it('lists messages with their statuses (read-only), by status and type', async () => {
      const all = await cli(['messages', 'list', '--json'], env);
      expect({ code: all.code, stderr: all.stderr }).toEqual({ code: 0, stderr: '' });
      expect(report(all.stdout).messages.map((m) => [m.id, m.type, m.status, m.retries])).toEqual([
        ['due', 'shop:order', 'due', 0],
        ['parked-1', 'shop:order', 'parked', 3],
        ['parked-2', 'shop:order', 'parked', 4],
        ['parked-other', 'shop:refund', 'parked', 3],
        ['paused', 'shop:order', 'paused', 1],
        ['paused-fresh', 'shop:order', 'paused', 0],
      ]);
      const parked = await cli(['messages', 'list', '--status', 'parked', '--type', 'order', '--json'], env);
      expect(report(parked.stdout).messages.map((m) => m.id)).toEqual(['parked-1', 'parked-2']);
      const text = await cli(['messages', 'list', '--status', 'paused', '--limit', '1'], env);
      expect(text.stdout).toMatch(/ID\s+TYPE\s+STATUS\s+RETRIES\n\s+paused\s+shop:order\s+paused\s+1\n/);
      expect(text.stdout).toContain('1 message(s) in status paused, maxRetries 3');
    });

    it('pages through the messages of a type with --limit and --offset', async () => {
      const page = async (offset: string) => {
        const res = await cli(
          ['messages', 'list', '--type', 'order', '--limit', '2', '--offset', offset, '--json'],
          env,
        );
        expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: '' });
        return report(res.stdout).messages.map((m) => m.id);
      };
      expect(await page('0')).toEqual(['due', 'parked-1']);
      expect(await page('2')).toEqual(['parked-2', 'paused']);
      expect(await page('4')).toEqual(['paused-fresh']);
      expect(await page('6')).toEqual([]);
      // The database filters by namespace too: a message of the name in another namespace.
      await insert(ctx.sql, t('COR_MESSAGE'), {
        ID: 'billing-order',
        PAYLOAD_ENCODING: 'jackson',
        PAYLOAD_TYPE_NAMESPACE: 'billing',
        PAYLOAD_TYPE_NAME: 'order',
        INSERTED: at(now - 5_000),
        RETRIES: 0,
      });
      expect(await page('4')).toEqual(['paused-fresh', 'billing-order']);
      const listed = async (...args: string[]) =>
        report(
          (await cli(['messages', 'list', '--type', 'order', ...args, '--json'], env)).stdout,
        ).messages.map((m) => m.id);
      expect(await listed('--namespace', 'billing')).toEqual(['billing-order']);
      expect(await listed('--namespace', 'shop', '--offset', '4')).toEqual(['paused-fresh']);
      expect(
        await listed('--namespace', 'shop', '--status', 'parked', '--limit', '1', '--offset', '1'),
      ).toEqual(['parked-2']);
      const misplaced = await cli(['messages', 'retry', 'parked-1', '--offset', '1'], env);
      expect(misplaced.code).toBe(2);
      expect(misplaced.stderr).toContain('--offset goes with messages list');
    });

    it('retries parked messages of a type: a dry run changes nothing, then each gets one more attempt', async () => {
      const dry = await cli(
        ['messages', 'retry', '--type', 'order', '--namespace', 'shop', '--dry-run', '--json'],
        env,
      );
      expect({ code: dry.code, stderr: dry.stderr }).toEqual({ code: 0, stderr: '' });
      expect(report(dry.stdout)).toMatchObject({ action: 'retry', dryRun: true, maxRetries: 3 });
      expect(report(dry.stdout).messages.map((m) => [m.id, m.status, m.result])).toEqual([
        ['parked-1', 'parked', 'would'],
        ['parked-2', 'parked', 'would'],
      ]);
      expect(await stored('parked-1')).toEqual({ retries: 3, nextRetry: now - 1_000 });

      const done = await cli(['messages', 'retry', '--type', 'order'], env);
      expect(done.code).toBe(0);
      expect(done.stdout).toMatch(/parked-1\s+shop:order\s+parked\s+3\s+done/);
      expect(done.stdout).toContain('retry: changed 2 of 2 message(s)');
      // RETRIES maxRetries - 1 and NEXT_RETRY now: due for Holdfast and for camunda-bpm-correlate.
      for (const id of ['parked-1', 'parked-2']) {
        const row = (await stored(id))!;
        expect(row.retries).toBe(2);
        expect(row.nextRetry).toBeGreaterThanOrEqual(now);
      }
      expect((await stored('parked-other'))!.retries).toBe(3);
      const due = await cli(['messages', 'list', '--status', 'due', '--json'], env);
      expect(report(due.stdout).messages.map((m) => m.id)).toEqual(['due', 'parked-1', 'parked-2']);
    });

    it('acts on the ids named; an unknown id is reported and fails the command', async () => {
      const resumed = await cli(['messages', 'resume', 'paused', 'paused-fresh', 'due', '--json'], env);
      expect(resumed.code).toBe(0);
      expect(report(resumed.stdout).messages.map((m) => [m.id, m.result])).toEqual([
        ['paused', 'done'],
        ['paused-fresh', 'done'],
        ['due', 'unchanged'],
      ]);
      // As camunda-bpm-correlate resumes: now with failed attempts, NULL without.
      expect((await stored('paused'))!.nextRetry).toBeGreaterThanOrEqual(now);
      expect((await stored('paused-fresh'))!.nextRetry).toBeNull();

      const paused = await cli(['messages', 'pause', 'due', '--json'], env);
      expect(report(paused.stdout).messages).toEqual([
        { id: 'due', type: 'shop:order', status: 'due', retries: 0, result: 'done' },
      ]);
      expect((await stored('due'))!.nextRetry).toBe(FAR_FUTURE);

      const deleted = await cli(['messages', 'delete', 'parked-other', 'nope', '--json'], env);
      expect(deleted.code).toBe(1);
      expect(report(deleted.stdout).messages.map((m) => [m.id, m.status, m.result])).toEqual([
        ['parked-other', 'parked', 'done'],
        ['nope', null, 'not found'],
      ]);
      expect(await stored('parked-other')).toBeNull();
      const dryDelete = await cli(['messages', 'delete', '--type', 'order', '--dry-run'], env);
      expect(dryDelete.stdout).toContain('dry run: delete would change 2 of 2 message(s); nothing changed');
      expect(await stored('parked-1')).not.toBeNull();
    });

    it('refuses what it cannot do with a usage error (exit 2)', async () => {
      const { HOLDFAST_INBOX_MAX_RETRIES: _, ...withoutMax } = env;
      const cases: [string[], NodeJS.ProcessEnv, string][] = [
        [['messages', 'list'], withoutMax, "messages needs the inbox's maxRetries"],
        [['messages', 'retry'], env, 'messages retry needs message ids, --type or --all-matching'],
        [['messages', 'retry', 'a', '--type', 'order'], env, 'give message ids or --type, not both'],
        [
          ['messages', 'list', '--status', 'lost'],
          env,
          '--status must be one of due, retrying, parked, paused, expired',
        ],
        [['messages', 'archive', 'a'], env, "unknown messages action 'archive'"],
        [['release', 'mutex', 'orders'], env, '--owner is required'],
        [['release', 'queue', 'orders', '--owner', 'x'], env, 'release needs what to release: mutex or lock'],
      ];
      for (const [argv, e, message] of cases) {
        const { code, stderr } = await cli(argv, e);
        expect({ argv, code }).toEqual({ argv, code: 2 });
        expect(stderr).toContain(message);
      }
    });

    it('releases a mutex or a master lock only from the owner named', async () => {
      await ctx.sql.execute(statement(`DELETE FROM ${t('simba_mutex')}`));
      await ctx.sql.execute(statement(`DELETE FROM ${t('HOLDFAST_LOCK')}`));
      await insert(ctx.sql, t('simba_mutex'), {
        mutex: 'orders',
        owner_id: 'node-dead',
        version: 4,
        acquired_at: 17,
        ttl_at: now + 60_000,
        transition_at: now + 90_000,
      });
      await insert(ctx.sql, t('HOLDFAST_LOCK'), {
        ID: 'broker',
        BROKER_NAME: 'node-dead',
        TIME: now + 60_000,
      });
      const release = async (argv: string[]) => {
        const { code, stdout } = await cli(['release', ...argv, '--json'], env);
        return { code, report: JSON.parse(stdout) as ReleaseReport };
      };

      expect(await release(['mutex', 'orders', '--owner', 'node-live'])).toEqual({
        code: 1,
        report: {
          kind: 'mutex',
          name: 'orders',
          owner: 'node-live',
          heldBy: 'node-dead',
          result: 'not held',
        },
      });
      expect((await release(['mutex', 'orders', '--owner', 'node-dead', '--dry-run'])).report.result).toBe(
        'would',
      );
      expect((await release(['mutex', 'nope', '--owner', 'node-dead'])).report.result).toBe('not found');
      expect(await release(['mutex', 'orders', '--owner', 'node-dead'])).toMatchObject({
        code: 0,
        report: { result: 'released' },
      });
      const [mutex] = await ctx.sql.query<Record<string, unknown>>(
        statement(`SELECT owner_id, acquired_at, ttl_at, transition_at, version FROM ${t('simba_mutex')}`),
      );
      // Free and acquirable at once; the fencing token's base is kept.
      expect(String(mutex.owner_id ?? '').trim()).toBe('');
      expect(Number(mutex.acquired_at)).toBe(17);
      expect(Number(mutex.transition_at)).toBeLessThan(now + 60_000);
      expect(Number(mutex.version)).toBe(5);

      const text = await cli(['release', 'lock', 'broker', '--owner', 'node-dead'], {
        ...env,
        HOLDFAST_ACTOR: 'alice',
      });
      expect(text).toEqual({
        code: 0,
        stdout: "released lock 'broker' (held by 'node-dead')\n",
        stderr: `holdfast audit: alice release lock 'broker' of owner 'node-dead' in ${t('HOLDFAST_LOCK')} on ${env.DATABASE_URL}: released\n`,
      });
      const [lock] = await ctx.sql.query<Record<string, unknown>>(
        statement(`SELECT BROKER_NAME AS broker_name, TIME AS lock_time FROM ${t('HOLDFAST_LOCK')}`),
      );
      expect(lock).toEqual({ broker_name: null, lock_time: null });
      expect((await release(['lock', 'broker', '--owner', 'node-dead'])).report).toMatchObject({
        heldBy: null,
        result: 'not held',
      });
    });
  },
  { tables: [...HOLDFAST_TABLES.map((t) => t.name), 'migrations'], tag: 'cla' },
);

describe('holdfast without a database', () => {
  it('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(await cli(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('npx holdfast works in the repository without a build (a real process)', async () => {
    const { stdout } = await promisify(execFile)('npx', ['--no-install', 'holdfast', '--version'], {
      cwd: repo,
      timeout: 60_000,
    });
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  }, 90_000);

  it('read-only commands create nothing for a mistyped SQLite path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'holdfast-cli-'));
    const missing = join(dir, 'no-such-dir', 'app.sqlite');
    for (const argv of [['status'], ['messages', 'list', '--max-retries', '3']]) {
      const { code, stderr } = await cli(argv, { DATABASE_URL: `sqlite:${missing}` });
      expect(code).toBe(1);
      expect(stderr).toContain(`there is no SQLite database at ${missing}`);
    }
    expect(existsSync(join(dir, 'no-such-dir'))).toBe(false);
  });
});
