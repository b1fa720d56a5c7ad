import { validateTablePrefix } from '@holdfast/core/kit';
import { databaseOf, jsonOption, output, parseOptions, prefixOption, type CliCommand } from '../cli-command';
import { DataSource } from 'typeorm';
import { dataSourceOptionsFromUrl } from '../database-url';
import { HOLDFAST_MIGRATIONS } from '@holdfast/cli/migrations';

export interface MigrateOptions {
  url: string | undefined;
  /** Table prefix; default HOLDFAST_TABLE_PREFIX, else none. */
  prefix?: string;
  /**
   * Where TypeORM records what ran; default {@link defaultMigrationsTable} (one per prefix).
   */
  migrationsTable?: string;
}

/**
 * TypeORM's own `migrations` table without a prefix, `<prefix>migrations` with one: the record of
 * what ran is per prefix, so a second prefix on the same database gets its own tables instead of
 * finding the first prefix's record and running nothing.
 */
export function defaultMigrationsTable(prefix: string): string {
  return prefix ? `${prefix}migrations` : 'migrations';
}

/**
 * `holdfast migrate`: runs the Holdfast migrations that have not run yet on DATABASE_URL and
 * returns their names. They are recorded in TypeORM's migrations table (see
 * defaultMigrationsTable), so an application that also lists HOLDFAST_MIGRATIONS in its DataSource,
 * with the same migrations table, sees them as done.
 */
export async function migrateCommand(options: MigrateOptions): Promise<string[]> {
  const prefix = options.prefix ?? process.env.HOLDFAST_TABLE_PREFIX ?? '';
  validateTablePrefix(prefix);
  const dataSource = new DataSource({
    ...dataSourceOptionsFromUrl(options.url),
    migrations: HOLDFAST_MIGRATIONS,
    migrationsTableName: options.migrationsTable ?? defaultMigrationsTable(prefix),
  });
  await dataSource.initialize();
  // The migrations read their prefix from the environment (HoldfastTableMigration).
  const previous = process.env.HOLDFAST_TABLE_PREFIX;
  process.env.HOLDFAST_TABLE_PREFIX = prefix;
  try {
    const ran = await dataSource.runMigrations({ transaction: 'each' });
    return ran.map((m) => m.name);
  } finally {
    if (previous === undefined) delete process.env.HOLDFAST_TABLE_PREFIX;
    else process.env.HOLDFAST_TABLE_PREFIX = previous;
    await dataSource.destroy();
  }
}

export const migrate: CliCommand = {
  name: 'migrate',
  usage: `  migrate [--prefix P] [--migrations-table NAME]
      create the Holdfast tables on DATABASE_URL (TypeORM migrations; the ones already run are
      skipped). What ran is recorded in NAME, default <prefix>migrations ("migrations" without a prefix)
`,
  async run(args, io) {
    const { values } = parseOptions(args, {
      prefix: prefixOption,
      'migrations-table': { type: 'string' },
      json: jsonOption,
    });
    const where = databaseOf(io, values);
    const migrationsTable = values['migrations-table'] ?? defaultMigrationsTable(where.prefix ?? '');
    const ran = await migrateCommand({ ...where, migrationsTable });
    output(io, values.json, { migrationsTable, ran }, () =>
      ran.length
        ? ran.map((name) => `holdfast migrate: ran ${name}\n`).join('')
        : `holdfast migrate: nothing to run, every Holdfast migration has run (recorded in ${migrationsTable})\n`,
    );
    return 0;
  },
};
