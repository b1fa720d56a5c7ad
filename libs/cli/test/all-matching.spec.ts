import { tableName, statement } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import { HOLDFAST_TABLES } from '../src';
import type { MessagesReport } from '../src/commands/messages.command';
import { cli, insert, testDatabaseUrl } from './cli-support';

/** Parked messages of one type beyond one page of the dashboard (50) and of the CLI's reads (1000 per statement). */
const PARKED_ORDERS = 1_005;

describeEachDatabase(
  'holdfast messages --all-matching',
  (ctx) => {
    let env: NodeJS.ProcessEnv;
    const t = (name: string) => tableName(ctx.prefix, name);
    const count = async (where: string) => {
      const [row] = await ctx.sql.query<{ n: unknown }>(
        statement(`SELECT COUNT(*) AS n FROM ${t('COR_MESSAGE')} WHERE ${where}`),
      );
      return Number(row.n);
    };

    beforeAll(async () => {
      env = {
        DATABASE_URL: testDatabaseUrl(ctx.db, ctx.dataSource),
        HOLDFAST_TABLE_PREFIX: ctx.prefix,
        HOLDFAST_INBOX_MAX_RETRIES: '3',
        HOLDFAST_ACTOR: 'alice@bastion',
      };
      expect((await cli(['migrate'], env)).stderr).toBe('');
    });

    beforeEach(async () => {
      await ctx.sql.execute(statement(`DELETE FROM ${t('COR_MESSAGE')}`));
      const now = await ctx.sql.nowMillis();
      const at = (ms: number) => ctx.sql.dialect.timestampParam(new Date(ms));
      const message = (id: string, name: string, extra: Record<string, unknown>) =>
        insert(ctx.sql, t('COR_MESSAGE'), {
          ID: id,
          PAYLOAD_ENCODING: 'jackson',
          PAYLOAD_TYPE_NAMESPACE: 'shop',
          PAYLOAD_TYPE_NAME: name,
          INSERTED: at(now - 60_000),
          RETRIES: 0,
          ...extra,
        });
      await ctx.sql.transaction(async (tx) => {
        for (let i = 0; i < PARKED_ORDERS; i++) {
          await insert(tx, t('COR_MESSAGE'), {
            ID: `order-${String(i).padStart(5, '0')}`,
            PAYLOAD_ENCODING: 'jackson',
            PAYLOAD_TYPE_NAMESPACE: 'shop',
            PAYLOAD_TYPE_NAME: 'order',
            INSERTED: at(now - 120_000 + i),
            RETRIES: 3,
            ERROR: 'x',
          });
        }
      });
      await message('refund-parked', 'refund', { RETRIES: 3, ERROR: 'x' });
      await message('order-due', 'order', {});
    });

    it('counts what the filter matches without --yes, changes nothing, and acts on all of them with --yes', async () => {
      const asked = await cli(['messages', 'delete', '--all-matching', '--type', 'shop:order'], env);
      expect(asked).toEqual({
        code: 0,
        stdout:
          `holdfast messages delete --all-matching: ${PARKED_ORDERS} message(s) match (type shop:order, ` +
          'the statuses delete is for); nothing changed. Run again with --yes to delete them.\n',
        stderr: '',
      });
      expect(await count('1 = 1')).toBe(PARKED_ORDERS + 2);

      const done = await cli(
        ['messages', 'delete', '--all-matching', '--type', 'shop:order', '--yes', '--json'],
        env,
      );
      expect(done.code).toBe(0);
      const report = JSON.parse(done.stdout) as MessagesReport;
      expect(report.messages.filter((m) => m.result === 'done')).toHaveLength(PARKED_ORDERS);
      expect(done.stderr).toMatch(
        new RegExp(
          `^holdfast audit: alice@bastion delete ${PARKED_ORDERS} of ${PARKED_ORDERS} message\\(s\\) in ${t('COR_MESSAGE')} on `,
        ),
      );
      // The due order and the other type's parked message stay.
      expect(await count('1 = 1')).toBe(2);
    });

    it('matches every type without --type, in the given status, and says the count as JSON', async () => {
      const asked = await cli(['messages', 'retry', '--all-matching', '--status', 'parked', '--json'], env);
      expect(asked.code).toBe(0);
      expect(asked.stderr).toBe('');
      const counted = JSON.parse(asked.stdout) as MessagesReport & { matching: number };
      expect(counted).toMatchObject({ action: 'retry', dryRun: true, matching: PARKED_ORDERS + 1 });

      const done = await cli(['messages', 'retry', '--all-matching', '--status', 'parked', '--yes'], env);
      expect(done.code).toBe(0);
      expect(done.stderr).toContain(`retry ${PARKED_ORDERS + 1} of ${PARKED_ORDERS + 1} message(s)`);
      // Retried: one more attempt each (RETRIES lowered below maxRetries), none parked now.
      expect(await count('RETRIES >= 3')).toBe(0);
    });

    it('refuses --yes without --all-matching, ids with it, and --dry-run beside it', async () => {
      const cases: [string[], string][] = [
        [['messages', 'delete', '--type', 'shop:order', '--yes'], '--yes goes with --all-matching'],
        [['messages', 'delete', 'order-00001', '--all-matching'], 'not both'],
        [['messages', 'delete', '--all-matching', '--dry-run'], 'leave out --dry-run'],
        [['messages', 'delete'], 'needs message ids, --type or --all-matching'],
      ];
      for (const [argv, message] of cases) {
        const res = await cli([...argv, '--json'], env);
        expect({ argv, code: res.code, error: JSON.parse(res.stdout).error }).toEqual({
          argv,
          code: 2,
          error: { code: 'HOLDFAST_CLI_USAGE', message: expect.stringContaining(message) },
        });
      }
      expect(await count('1 = 1')).toBe(PARKED_ORDERS + 2);
    });
  },
  { tables: [...HOLDFAST_TABLES.map((t) => t.name), 'migrations'] },
);
