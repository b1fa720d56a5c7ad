import { tableName } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import { HOLDFAST_TABLES } from '../src';
import type { MessageHistoryReport } from '../src/commands/messages.command';
import { cli, insert, testDatabaseUrl } from './cli-support';

/** `holdfast messages history <id>` end to end on the inbox's history table (issue #48). */
describeEachDatabase(
  'holdfast messages history',
  (ctx) => {
    let env: NodeJS.ProcessEnv;
    const t = (name: string) => tableName(ctx.prefix, name);
    const entry = (n: number, outcome: string, error: string | null, at: number) =>
      insert(ctx.sql, t('HOLDFAST_INBOX_HISTORY'), {
        ENTRY_ID: `e-${n}`,
        MESSAGE_ID: 'm-1',
        TYPE_NAMESPACE: 'demo',
        TYPE_NAME: 'note',
        TYPE_REVISION: null,
        OUTCOME: outcome,
        ATTEMPT: n,
        ERROR: error,
        NODE: 'node-a',
        AT_MS: at,
      });

    beforeAll(async () => {
      env = { DATABASE_URL: testDatabaseUrl(ctx.db, ctx.dataSource), HOLDFAST_TABLE_PREFIX: ctx.prefix };
      expect((await cli(['migrate'], env)).stderr).toBe('');
      const t0 = Date.UTC(2026, 10, 29, 10, 0, 0);
      await entry(1, 'failed', 'Error: upstream down #1\n    at x', t0);
      await entry(2, 'failed', 'Error: upstream down #2', t0 + 1000);
      await entry(3, 'delivered', null, t0 + 3000);
    });

    it('prints every attempt of a message with its error, oldest first', async () => {
      const text = await cli(['messages', 'history', 'm-1'], env);
      expect(text.code).toBe(0);
      expect(text.stdout).toContain('History of message m-1 (3 outcome(s))');
      expect(text.stdout).toMatch(/attempt 1: failed .*\(demo:note\)\n\s+Error: upstream down #1\n/);
      expect(text.stdout).toMatch(/attempt 3: delivered/);
      const json = await cli(['messages', 'history', 'm-1', '--json'], env);
      const report = JSON.parse(json.stdout) as MessageHistoryReport;
      expect(report.entries.map((e) => [e.attempt, e.outcome, e.error?.split('\n')[0] ?? null])).toEqual([
        [1, 'failed', 'Error: upstream down #1'],
        [2, 'failed', 'Error: upstream down #2'],
        [3, 'delivered', null],
      ]);
      expect(report.entries[0].at).toBe('2026-11-29T10:00:00.000Z');
    });

    it('exits 1 for a message without history, and says why without a history table', async () => {
      const none = await cli(['messages', 'history', 'nope'], env);
      expect(none).toMatchObject({ code: 1, stdout: 'No history of message nope.\n' });
      const missing = await cli(['messages', 'history', 'm-1', '--prefix', `${ctx.prefix}none_`], env);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/HOLDFAST_INBOX_HISTORY.*`history` option/);
      const usage = await cli(['messages', 'history'], env);
      expect(usage.code).toBe(2);
    });
  },
  { tables: [...HOLDFAST_TABLES.map((t) => t.name), 'migrations'], tag: 'clh' },
);
