import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { hostname, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tableName, statement } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import { HOLDFAST_TABLES } from '../src';
import type { MessagesReport } from '../src/commands/messages.command';
import { cli, insert, testDatabaseUrl } from './cli-support';

const repo = join(__dirname, '..', '..', '..');
/** Ports of this suite's own range on which nothing listens: an unreachable server. */
const NOTHING_LISTENS = { postgres: 25581, mysql: 25582 };

type JsonError = { error: { code: string | null; message: string } };

describeEachDatabase(
  'holdfast at its edges: one type spelling, errors, the audit line',
  (ctx) => {
    let env: NodeJS.ProcessEnv;
    const t = (name: string) => tableName(ctx.prefix, name);
    const ids = (stdout: string) => (JSON.parse(stdout) as MessagesReport).messages.map((m) => m.id);

    beforeAll(async () => {
      env = {
        DATABASE_URL: testDatabaseUrl(ctx.db, ctx.dataSource),
        HOLDFAST_TABLE_PREFIX: ctx.prefix,
        HOLDFAST_INBOX_MAX_RETRIES: '3',
      };
      expect((await cli(['migrate'], env)).code).toBe(0);
    });

    beforeEach(async () => {
      await ctx.sql.execute(statement(`DELETE FROM ${t('COR_MESSAGE')}`));
      const now = await ctx.sql.nowMillis();
      const message = (id: string, type: Record<string, string>, inserted: number, retries = 3) =>
        insert(ctx.sql, t('COR_MESSAGE'), {
          ID: id,
          PAYLOAD_ENCODING: 'jackson',
          ...type,
          INSERTED: ctx.sql.dialect.timestampParam(new Date(now - inserted)),
          RETRIES: retries,
          ERROR: 'boom',
        });
      // Parked (RETRIES 3 = maxRetries) notes of the demo, one of a second revision, and one
      // type without a namespace.
      const note = { PAYLOAD_TYPE_NAMESPACE: 'demo', PAYLOAD_TYPE_NAME: 'note' };
      await message('note-1', note, 50_000);
      await message('note-2', note, 40_000);
      await message('note-v2', { ...note, PAYLOAD_TYPE_REVISION: '2' }, 30_000);
      await message('plain-1', { PAYLOAD_TYPE_NAME: 'plain' }, 20_000);
      await message('due-note', note, 10_000, 0);
    });

    it('prints a type one way, namespace:name[@revision], and takes it back the same way', async () => {
      const all = await cli(['messages', 'list', '--json'], env);
      expect((JSON.parse(all.stdout) as MessagesReport).messages.map((m) => [m.id, m.type])).toEqual([
        ['note-1', 'demo:note'],
        ['note-2', 'demo:note'],
        ['note-v2', 'demo:note@2'],
        ['plain-1', 'plain'],
        ['due-note', 'demo:note'],
      ]);
      const list = async (...argv: string[]) => {
        const res = await cli(['messages', 'list', '--json', ...argv], env);
        expect({ argv, code: res.code, stderr: res.stderr }).toEqual({ argv, code: 0, stderr: '' });
        return ids(res.stdout);
      };
      // What the label leaves out is not filtered.
      expect(await list('--type', 'demo:note')).toEqual(['note-1', 'note-2', 'note-v2', 'due-note']);
      expect(await list('--type', 'demo:note@2')).toEqual(['note-v2']);
      expect(await list('--type', 'note', '--status', 'parked')).toEqual(['note-1', 'note-2', 'note-v2']);
      expect(await list('--type', ':plain')).toEqual(['plain-1']);
      expect(await list('--type', 'plain')).toEqual(['plain-1']);
      // The older form: a name and its namespace apart.
      expect(await list('--type', 'note', '--namespace', 'demo', '--status', 'due')).toEqual(['due-note']);

      const text = await cli(['messages', 'list', '--type', 'demo:note@2'], env);
      expect(text.stdout).toMatch(/note-v2\s+demo:note@2\s+parked\s+3\n/);
      expect(text.stdout).toContain('1 message(s) of type demo:note@2, maxRetries 3');

      const dry = await cli(['messages', 'retry', '--type', 'demo:note', '--dry-run', '--json'], env);
      expect(ids(dry.stdout)).toEqual(['note-1', 'note-2', 'note-v2']);
    });

    it('refuses a type the inbox holds no message of (exit 1), naming the types it holds', async () => {
      // The dashboard's former spelling: it used to answer "0 message(s)" with exit code 0.
      for (const action of ['list', 'retry', 'delete']) {
        const res = await cli(['messages', action, '--type', 'demo/note', '--json'], env);
        expect({ action, code: res.code, stderr: res.stderr }).toEqual({ action, code: 1, stderr: '' });
        const { error } = JSON.parse(res.stdout) as JsonError;
        expect(error.code).toBe('HOLDFAST_CLI_UNKNOWN_TYPE');
        expect(error.message).toBe(
          "the inbox holds no message of type 'demo/note': it holds demo:note (3), demo:note@2 (1), plain (1). " +
            'A type is written namespace:name, with @revision when it has one (a name alone matches it in any namespace)',
        );
      }
      const text = await cli(['messages', 'list', '--type', 'shop:order'], env);
      expect(text.code).toBe(1);
      expect(text.stderr).toContain("holdfast messages: the inbox holds no message of type 'shop:order'");
      expect(text.stderr).toContain('[HOLDFAST_CLI_UNKNOWN_TYPE]');
      // Nothing was changed by the refused actions.
      expect((await ctx.sql.query(statement(`SELECT ID FROM ${t('COR_MESSAGE')}`))).length).toBe(5);

      for (const argv of [
        ['--type', 'demo:note', '--namespace', 'demo'],
        ['--type', 'demo:'],
        ['--namespace', 'demo'],
      ]) {
        const usage = await cli(['messages', 'list', ...argv, '--json'], env);
        expect({ argv, code: usage.code }).toEqual({ argv, code: 2 });
        expect((JSON.parse(usage.stdout) as JsonError).error.code).toBe('HOLDFAST_CLI_USAGE');
      }
    });

    it('logs each change on stderr: who did it, what, how many, where (stdout keeps the result)', async () => {
      const where = `${t('COR_MESSAGE')} on ${env.DATABASE_URL}`;
      const retry = await cli(['messages', 'retry', '--type', 'demo:note', '--json'], {
        ...env,
        HOLDFAST_ACTOR: 'alice@bastion',
      });
      expect(retry.code).toBe(0);
      expect(ids(retry.stdout)).toEqual(['note-1', 'note-2', 'note-v2']);
      expect(retry.stderr).toBe(
        `holdfast audit: alice@bastion retry 3 of 3 message(s) in ${where}: note-1, note-2, note-v2\n`,
      );
      // Without HOLDFAST_ACTOR: the OS user at this host.
      const paused = await cli(['messages', 'pause', 'due-note', 'gone'], env);
      expect(paused.code).toBe(1);
      expect(paused.stderr).toBe(
        `holdfast audit: ${userInfo().username}@${hostname()} pause 1 of 2 message(s) in ${where}: due-note\n`,
      );
      // A dry run changes nothing and logs nothing.
      expect((await cli(['messages', 'delete', 'plain-1', '--dry-run'], env)).stderr).toBe('');
    });

    it('answers --json errors in JSON on stdout, with the code', async () => {
      const missing = await cli(['messages', 'list', '--json'], {
        ...env,
        HOLDFAST_TABLE_PREFIX: 'nothing_',
      });
      expect({ code: missing.code, stderr: missing.stderr }).toEqual({ code: 1, stderr: '' });
      expect(JSON.parse(missing.stdout)).toEqual({
        error: {
          code: 'HOLDFAST_CLI_NO_INBOX_TABLE',
          message:
            "there is no table nothing_COR_MESSAGE (the inbox's messages): check DATABASE_URL and --prefix",
        },
      });
      const usage = await cli(['status', '--json', '--max-retries', 'many'], env);
      expect({ code: usage.code, stderr: usage.stderr }).toEqual({ code: 2, stderr: '' });
      expect(JSON.parse(usage.stdout)).toEqual({
        error: { code: 'HOLDFAST_CLI_USAGE', message: "--max-retries must be a whole number, got 'many'" },
      });
    });
  },
  { tables: [...HOLDFAST_TABLES.map((t) => t.name), 'migrations'], tag: 'cle' },
);

describe('holdfast at its edges, without a database', () => {
  it('--help of each command prints its usage (exit 0), also before a missing option', async () => {
    for (const argv of [
      ['ddl', '--help'],
      ['migrate', '--help'],
      ['status', '--help'],
      ['messages', '--help'],
      ['messages', 'list', '--help'],
      ['messages', 'retry', '-h'],
      ['release', '--help'],
      ['help', 'status'],
    ]) {
      const command = argv[0] === 'help' ? argv[1] : argv[0];
      const res = await cli(argv);
      expect({ argv, code: res.code, stderr: res.stderr }).toEqual({ argv, code: 0, stderr: '' });
      expect(res.stdout).toMatch(new RegExp(`^usage: holdfast ${command} `));
      expect(res.stdout).toContain('Exit code: 0 done');
    }
    expect((await cli(['status', '--help'])).stdout).not.toContain('messages list');
  });

  it('names a SQLite URL that is a directory, for every command, instead of "disk I/O error"', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'holdfast-cli-dir-'));
    for (const argv of [['status'], ['migrate'], ['messages', 'list', '--max-retries', '3']]) {
      const res = await cli([...argv, '--json'], { DATABASE_URL: `sqlite:${dir}` });
      expect({ argv, code: res.code }).toEqual({ argv, code: 1 });
      expect(JSON.parse(res.stdout)).toEqual({
        error: {
          code: 'HOLDFAST_CLI_DATABASE_URL',
          message:
            `DATABASE_URL ${JSON.stringify(`sqlite:${dir}`)}: ${dir} is a directory, not a SQLite database ` +
            `file (name the file, e.g. sqlite:${join(dir, 'app.sqlite')})`,
        },
      });
    }
  });

  it('the bin as a process: an unreachable server with --json is a JSON error on stdout, exit 1', async () => {
    const run = (url: string) =>
      promisify(execFile)(process.execPath, [join(repo, 'libs/cli/bin/holdfast.js'), 'status', '--json'], {
        cwd: repo,
        env: { ...process.env, DATABASE_URL: url },
        timeout: 60_000,
      }).then(
        () => {
          throw new Error(`holdfast status succeeded on ${url}`);
        },
        (failed: { code: number; stdout: string; stderr: string }) => failed,
      );
    for (const url of [
      `postgres://app:s3cret@127.0.0.1:${NOTHING_LISTENS.postgres}/app`,
      `mariadb://app:s3cret@127.0.0.1:${NOTHING_LISTENS.mysql}/app`,
    ]) {
      const { code, stdout, stderr } = await run(url);
      expect({ url, code, stderr }).toEqual({ url, code: 1, stderr: '' });
      const { error } = JSON.parse(stdout) as JsonError;
      expect(error.code).toBe('HOLDFAST_CLI_DATABASE_UNREACHABLE');
      expect(error.message).toMatch(
        /^cannot open (postgres|mariadb):\/\/app:\*\*\*@127\.0\.0\.1:\d+\/app: .*ECONNREFUSED/,
      );
      expect(stdout).not.toContain('s3cret');
    }
  }, 120_000);
});
