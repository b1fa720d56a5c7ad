import { SchemaManager, sqlClientFor, statement } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import { HOLDFAST_MIGRATIONS, HOLDFAST_TABLES } from '../src';
import { CorMessageFillFactor1764000000408 as CorMessageFillFactor } from '../../../migrations/1764000000408-cor-message-fill-factor';
import { cli, testDatabaseUrl } from './cli-support';

describeEachDatabase(
  'holdfast migrate',
  (ctx) => {
    const prefix = ctx.prefix;
    const migrationsTable = `${prefix}migrations`;

    it('creates every Holdfast table on DATABASE_URL, and each module accepts them', async () => {
      const env = { DATABASE_URL: testDatabaseUrl(ctx.db, ctx.dataSource), HOLDFAST_TABLE_PREFIX: prefix };
      const first = await cli(['migrate'], env);
      expect(first.stderr).toBe('');
      expect(first.code).toBe(0);
      expect(first.stdout.trim().split('\n')).toEqual(
        HOLDFAST_MIGRATIONS.map((m) => `holdfast migrate: ran ${m.name}`),
      );

      // The schema check each module runs at startup (tables, columns, indexes).
      const schema = new SchemaManager(sqlClientFor(ctx.dataSource));
      for (const table of HOLDFAST_TABLES) await schema.apply(table, prefix, 'check');

      // Recorded in <prefix>migrations by default.
      const again = await cli(['migrate', '--migrations-table', migrationsTable], env);
      expect(again).toEqual({ code: 0, stdout: expect.stringContaining('nothing to run'), stderr: '' });
    });

    it('--prefix after an unprefixed migrate creates the prefixed tables (a migrations table per prefix)', async () => {
      const url = testDatabaseUrl(ctx.db, ctx.dataSource);
      const other = `${prefix}b_`;
      const schema = new SchemaManager(sqlClientFor(ctx.dataSource));
      try {
        const plain = await cli(['migrate', '--json'], { DATABASE_URL: url });
        expect({ code: plain.code, stderr: plain.stderr }).toEqual({ code: 0, stderr: '' });
        expect(JSON.parse(plain.stdout)).toMatchObject({ migrationsTable: 'migrations' });
        const prefixed = await cli(['migrate', '--prefix', other, '--json'], { DATABASE_URL: url });
        expect({ code: prefixed.code, stderr: prefixed.stderr }).toEqual({ code: 0, stderr: '' });
        expect(JSON.parse(prefixed.stdout)).toEqual({
          migrationsTable: `${other}migrations`,
          ran: HOLDFAST_MIGRATIONS.map((m) => m.name),
        });
        for (const table of HOLDFAST_TABLES) await schema.apply(table, other, 'check');
      } finally {
        for (const p of ['', other]) {
          for (const t of [...HOLDFAST_TABLES.map((t) => t.name), 'migrations'].reverse()) {
            await ctx.sql.execute(statement(`DROP TABLE IF EXISTS ${p}${t}`));
          }
        }
      }
    });

    it('a bad --prefix is refused (exit 2) even with a good HOLDFAST_TABLE_PREFIX', async () => {
      const env = { DATABASE_URL: testDatabaseUrl(ctx.db, ctx.dataSource), HOLDFAST_TABLE_PREFIX: prefix };
      const bad = await cli(['migrate', '--prefix', 'a-b', '--migrations-table', migrationsTable], env);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('Invalid table prefix "a-b"');
    });

    if (ctx.db === 'postgres') {
      it('gives a COR_MESSAGE created before fill factors the fill factor 50, and takes it back on revert', async () => {
        const table = `${prefix}COR_MESSAGE`;
        const fillFactor = async () =>
          (
            await ctx.sql.query<{ reloptions: string[] | null }>(
              statement('SELECT reloptions FROM pg_class WHERE oid = CAST($1 AS regclass)', [
                table.toLowerCase(),
              ]),
            )
          )[0].reloptions;
        const env = { DATABASE_URL: testDatabaseUrl(ctx.db, ctx.dataSource), HOLDFAST_TABLE_PREFIX: prefix };
        try {
          const all = await cli(['migrate', '--migrations-table', migrationsTable], env);
          expect(all.code).toBe(0);
          expect(await fillFactor()).toEqual(['fillfactor=50']);
          // As an earlier version left it: the table without a fill factor, its migration not run.
          await ctx.sql.execute(statement(`ALTER TABLE ${table} RESET (fillfactor)`));
          await ctx.sql.execute(
            statement(`DELETE FROM ${migrationsTable} WHERE name = $1`, [CorMessageFillFactor.name]),
          );
          expect(await fillFactor()).toBeNull();
          const upgrade = await cli(['migrate', '--migrations-table', migrationsTable], env);
          expect(upgrade.stdout.trim()).toBe(`holdfast migrate: ran ${CorMessageFillFactor.name}`);
          expect(await fillFactor()).toEqual(['fillfactor=50']);
          const runner = ctx.dataSource.createQueryRunner();
          const previous = process.env.HOLDFAST_TABLE_PREFIX;
          process.env.HOLDFAST_TABLE_PREFIX = prefix;
          try {
            await new CorMessageFillFactor().down(runner);
          } finally {
            if (previous === undefined) delete process.env.HOLDFAST_TABLE_PREFIX;
            else process.env.HOLDFAST_TABLE_PREFIX = previous;
            await runner.release();
          }
          expect(await fillFactor()).toBeNull();
        } finally {
          for (const t of [...HOLDFAST_TABLES.map((t) => t.name), 'migrations'].reverse()) {
            await ctx.sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}${t}`));
          }
        }
      });
    }
  },
  { tables: [...HOLDFAST_TABLES.map((t) => t.name), 'migrations'], tag: 'cli' },
);

describe('holdfast migrate without a usable DATABASE_URL', () => {
  it('says DATABASE_URL is not set', async () => {
    const { code, stderr } = await cli(['migrate'], {});
    expect(code).toBe(1);
    expect(stderr).toContain('DATABASE_URL is not set');
  });

  it('refuses an unknown scheme, without printing the password', async () => {
    const { code, stderr } = await cli(['migrate'], { DATABASE_URL: 'redis://app:s3cret@127.0.0.1:6379/0' });
    expect(code).toBe(1);
    expect(stderr).toContain('DATABASE_URL must start with postgres://');
    expect(stderr).toContain('redis://app:***@127.0.0.1');
    expect(stderr).not.toContain('s3cret');
  });

  it('reports a database it cannot reach as a failure (exit 1), without the password', async () => {
    const { code, stderr } = await cli(['migrate'], {
      DATABASE_URL: 'postgres://app:s3cret@127.0.0.1:1/none',
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(/ECONNREFUSED/);
    expect(stderr).not.toContain('s3cret');
  });
});
