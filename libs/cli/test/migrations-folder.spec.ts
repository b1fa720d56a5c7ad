import { join } from 'node:path';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { SchemaManager } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import { HOLDFAST_MIGRATIONS, HOLDFAST_TABLES } from '../src';
import { cli, testDatabaseUrl } from './cli-support';

/** The repository's top-level migrations/ folder: the one source of the Holdfast migrations. */
const FOLDER = join(__dirname, '..', '..', '..', 'migrations');

describeEachDatabase(
  'the top-level migrations/ folder in an application DataSource',
  (ctx) => {
    it("creates every table from the application's own migrations list, and the CLI sees them as run", async () => {
      const migrationsTable = `${ctx.prefix}migrations`;
      // As an application lists them: TypeORM loads every migration file of the folder.
      const app = new DataSource({
        ...(ctx.dataSource.options as DataSourceOptions),
        migrations: [join(FOLDER, '1*.ts')],
        migrationsTableName: migrationsTable,
      });
      await app.initialize();
      // The migrations read the table prefix from HOLDFAST_TABLE_PREFIX.
      const previous = process.env.HOLDFAST_TABLE_PREFIX;
      process.env.HOLDFAST_TABLE_PREFIX = ctx.prefix;
      try {
        const ran = await app.runMigrations({ transaction: 'each' });
        // The folder's files are exactly what the CLI runs (HOLDFAST_MIGRATIONS), in its order.
        expect(ran.map((m) => m.name)).toEqual(HOLDFAST_MIGRATIONS.map((m) => m.name));
      } finally {
        if (previous === undefined) delete process.env.HOLDFAST_TABLE_PREFIX;
        else process.env.HOLDFAST_TABLE_PREFIX = previous;
        await app.destroy();
      }
      const schema = new SchemaManager(ctx.sql);
      for (const table of HOLDFAST_TABLES) await schema.apply(table, ctx.prefix, 'check');

      const again = await cli(['migrate', '--prefix', ctx.prefix], {
        DATABASE_URL: testDatabaseUrl(ctx.db, ctx.dataSource),
      });
      expect(again).toEqual({
        code: 0,
        stdout: `holdfast migrate: nothing to run, every Holdfast migration has run (recorded in ${migrationsTable})\n`,
        stderr: '',
      });
    });
  },
  { tables: [...HOLDFAST_TABLES.map((t) => t.name), 'migrations'], tag: 'clm' },
);
