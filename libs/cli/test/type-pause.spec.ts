import { tableName, statement } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import { HOLDFAST_TABLES } from '../src';
import type { TypePauseReport } from '../src/commands/messages.command';
import { cli, testDatabaseUrl } from './cli-support';

describeEachDatabase(
  'holdfast messages pause-type / resume-type / paused-types',
  (ctx) => {
    let env: NodeJS.ProcessEnv;
    const pauseRows = async () =>
      ctx.sql.query<{ type_key: string; paused_by: string; reason: string | null }>(
        statement(
          `SELECT TYPE_KEY AS type_key, PAUSED_BY AS paused_by, REASON AS reason ` +
            `FROM ${tableName(ctx.prefix, 'HOLDFAST_INBOX_PAUSE')} ORDER BY TYPE_KEY`,
        ),
      );

    beforeAll(async () => {
      env = {
        DATABASE_URL: testDatabaseUrl(ctx.db, ctx.dataSource),
        HOLDFAST_TABLE_PREFIX: ctx.prefix,
        HOLDFAST_ACTOR: 'alice@bastion',
      };
      expect((await cli(['migrate'], env)).stderr).toBe('');
    });

    it('pauses a type with who and why, lists it, replaces a second pause, resumes it, and audits each change', async () => {
      const paused = await cli(['messages', 'pause-type', 'shop:order', '--reason', 'supplier down'], env);
      expect(paused.code).toBe(0);
      expect(paused.stdout).toContain(
        'Paused type shop:order: no node claims its messages until resume-type.',
      );
      expect(paused.stdout).toMatch(/shop:order\s+alice@bastion\s+\S+Z\s+supplier down/);
      expect(paused.stderr).toMatch(
        new RegExp(
          `^holdfast audit: alice@bastion pause-type 'shop:order' \\(supplier down\\) in ${ctx.prefix}COR_MESSAGE on `,
        ),
      );
      expect(await pauseRows()).toEqual([
        { type_key: 'shop:order', paused_by: 'alice@bastion', reason: 'supplier down' },
      ]);

      // `:refund` (no namespace) stays apart from `refund` (any namespace).
      expect((await cli(['messages', 'pause-type', ':refund'], { ...env, HOLDFAST_ACTOR: 'bob' })).code).toBe(
        0,
      );
      const again = await cli(['messages', 'pause-type', 'shop:order', '--reason', 'still down', '--json'], {
        ...env,
        HOLDFAST_ACTOR: 'carol',
      });
      const report = JSON.parse(again.stdout) as TypePauseReport;
      expect(report.result).toBe('replaced');
      expect(report.paused.map((p) => [p.type, p.pausedBy, p.reason])).toEqual([
        [':refund', 'bob', undefined],
        ['shop:order', 'carol', 'still down'],
      ]);

      const listed = await cli(['messages', 'paused-types', '--json'], env);
      expect(listed).toMatchObject({ code: 0, stderr: '' });
      expect((JSON.parse(listed.stdout) as TypePauseReport).paused.map((p) => p.type)).toEqual([
        ':refund',
        'shop:order',
      ]);

      const resumed = await cli(['messages', 'resume-type', 'shop:order'], env);
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toContain('Resumed type shop:order: its messages are delivered again.');
      expect(resumed.stderr).toMatch(/^holdfast audit: alice@bastion resume-type 'shop:order' in /);
      expect((await pauseRows()).map((r) => r.type_key)).toEqual([':refund']);

      const notPaused = await cli(['messages', 'resume-type', 'shop:order'], env);
      expect(notPaused).toMatchObject({ code: 1, stderr: '' });
      expect(notPaused.stdout).toContain('Type shop:order is not paused: nothing changed.');
      expect((await cli(['messages', 'resume-type', ':refund'], env)).code).toBe(0);
      expect(await pauseRows()).toEqual([]);
    });

    it('refuses what names no type, and says what is missing without the pause table', async () => {
      for (const args of [
        ['pause-type'],
        ['pause-type', 'shop:'],
        ['pause-type', 'a', 'b'],
        ['resume-type', 'x', '--reason', 'y'],
      ]) {
        const refused = await cli(['messages', ...args], env);
        expect(refused.code).toBe(2);
        expect(refused.stdout).toBe('');
      }
      const noTable = await cli(['messages', 'pause-type', 'shop:order'], {
        ...env,
        HOLDFAST_TABLE_PREFIX: `${ctx.prefix}none_`,
      });
      expect(noTable.code).toBe(1);
      expect(noTable.stderr).toContain(`there is no table ${ctx.prefix}none_COR_MESSAGE`);
      await ctx.sql.execute(statement(`DROP TABLE ${tableName(ctx.prefix, 'HOLDFAST_INBOX_PAUSE')}`));
      const missing = await cli(['messages', 'pause-type', 'shop:order'], env);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain(
        `${ctx.prefix}HOLDFAST_INBOX_PAUSE does not exist. Run the Holdfast migrations`,
      );
    });
  },
  { tables: [...HOLDFAST_TABLES.map((t) => t.name), 'migrations'] },
);
