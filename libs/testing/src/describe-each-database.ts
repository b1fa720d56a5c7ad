import type { DataSource } from 'typeorm';
import { SqlClient, sqlClientFor, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  testDatabases,
  uniqueTablePrefix,
  type TestDatabase,
  type TestDataSourceOverrides,
} from './test-databases';

/** What a test gets for one database: set in beforeAll, closed in afterAll. */
export interface TestDatabaseContext {
  readonly db: TestDatabase;
  readonly dataSource: DataSource;
  readonly sql: SqlClient;
  /** A table prefix unique to this suite and database. */
  readonly prefix: string;
}

type Hook = (fn: () => unknown, timeout?: number) => void;
interface JestGlobals {
  describe: (name: string, fn: () => void) => void;
  beforeAll: Hook;
  afterAll: Hook;
}

/**
 * Runs `body` once per database listed in HOLDFAST_TEST_DATABASES, each in its own describe
 * block with a live DataSource. Tables made under `ctx.prefix` are dropped afterwards when
 * `tables` lists them.
 */
export function describeEachDatabase(
  title: string,
  body: (ctx: TestDatabaseContext) => void,
  options: { tables?: string[]; overrides?: TestDataSourceOverrides; tag?: string } = {},
): void {
  const { describe, beforeAll, afterAll } = globalThis as unknown as JestGlobals;
  for (const db of testDatabases()) {
    describe(`${title} [${db}]`, () => {
      const ctx = { db, prefix: uniqueTablePrefix(options.tag ?? db) } as {
        db: TestDatabase;
        dataSource: DataSource;
        sql: SqlClient;
        prefix: string;
      };
      beforeAll(async () => {
        ctx.dataSource = await createTestDataSource(db, options.overrides);
        ctx.sql = sqlClientFor(ctx.dataSource);
      });
      afterAll(async () => {
        if (!ctx.dataSource?.isInitialized) return;
        for (const table of options.tables ?? []) {
          await ctx.sql
            .execute(statement(`DROP TABLE IF EXISTS ${ctx.prefix}${table}`))
            .catch(() => undefined);
        }
        await ctx.dataSource.destroy();
      });
      body(ctx);
    });
  }
}
