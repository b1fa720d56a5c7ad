import type { SqlClient } from '@holdfast/core/kit';
import type { TestDatabase } from '@holdfast/testing';
import type { DataSource } from 'typeorm';
import { runCli } from '../src/cli';
import { statement } from '@holdfast/core/kit';

/** DATABASE_URL for a test database: the server URLs from HOLDFAST_TEST_*, or the suite's SQLite file. */
export function testDatabaseUrl(db: TestDatabase, dataSource: DataSource): string {
  switch (db) {
    case 'sqlite':
      return `sqlite:${dataSource.options.database as string}`;
    case 'postgres':
      return process.env.HOLDFAST_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    case 'mariadb':
      return (process.env.HOLDFAST_TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test').replace(
        /^mysql:/,
        'mariadb:',
      );
  }
}

/** Runs the CLI in this process with captured output. */
export async function cli(argv: string[], env: NodeJS.ProcessEnv = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env,
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
  });
  return { code, stdout, stderr };
}

/** Inserts `row` (column → value) into `table` as the tests' fixtures do. */
export async function insert(sql: SqlClient, table: string, row: Record<string, unknown>): Promise<void> {
  const columns = Object.keys(row);
  await sql.execute(
    statement(
      `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${sql.dialect.placeholders(columns.length)})`,
      Object.values(row),
    ),
  );
}
