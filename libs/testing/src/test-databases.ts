import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { HoldfastError } from '@holdfast/core/kit';

export const TEST_DATABASES = ['sqlite', 'postgres', 'mariadb'] as const;
export type TestDatabase = (typeof TEST_DATABASES)[number];

/** The databases listed in HOLDFAST_TEST_DATABASES (comma list; default `sqlite`). */
export function testDatabases(env: NodeJS.ProcessEnv = process.env): TestDatabase[] {
  const list = (env.HOLDFAST_TEST_DATABASES ?? 'sqlite')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  for (const name of list) {
    if (!(TEST_DATABASES as readonly string[]).includes(name)) {
      throw new HoldfastError(
        `HOLDFAST_TEST_DATABASES lists '${name}'; expected a comma list of ${TEST_DATABASES.join(', ')}`,
        'HOLDFAST_TESTING_CONFIG',
      );
    }
  }
  return list as TestDatabase[];
}

/** A fresh SQLite file in a temporary directory. */
export function tempSqliteFile(tag = 'holdfast'): string {
  return join(mkdtempSync(join(tmpdir(), `${tag}-`)), 'test.sqlite');
}

export interface TestDataSourceOverrides {
  /** SQLite only: the file to open (shared between processes); default a fresh temp file. */
  sqliteFile?: string;
  /** postgres/mariadb: connect through this port (a TcpProxy) instead of the server's. */
  port?: number;
  /** Connection pool size (postgres/mariadb). */
  poolSize?: number;
  /** Extra TypeORM options. */
  extra?: Record<string, unknown>;
}

/**
 * One database for a soak whose property does not depend on the database (a process's timing, a
 * cron's ticks, a pool under load): the first of `preferred` that HOLDFAST_TEST_DATABASES selects,
 * or none. With HOLDFAST_TEST_SOAK_ALL=1, every one of `preferred` that is selected. The
 * statements behind it run on every database in the default suites.
 */
export function soakDatabase<T extends TestDatabase>(
  preferred: readonly T[],
  env: NodeJS.ProcessEnv = process.env,
): T[] {
  const selected = testDatabases(env);
  const chosen = preferred.filter((db) => selected.includes(db));
  return env.HOLDFAST_TEST_SOAK_ALL === '1' ? chosen : chosen.slice(0, 1);
}

/** The test servers' URLs when HOLDFAST_TEST_PG_URL / HOLDFAST_TEST_MARIADB_URL are not set. */
const SERVER_URLS = {
  postgres: { env: 'HOLDFAST_TEST_PG_URL', fallback: 'postgres://postgres@127.0.0.1:5432/test' },
  mariadb: { env: 'HOLDFAST_TEST_MARIADB_URL', fallback: 'mysql://root@127.0.0.1:3306/test' },
} as const;

/** A test database that runs as a server. */
export type TestServerDatabase = Exclude<TestDatabase, 'sqlite'>;

/** The selected test databases that are servers (a network path can be cut, a proxy put in front): no SQLite. */
export function testServerDatabases(env: NodeJS.ProcessEnv = process.env): TestServerDatabase[] {
  return testDatabases(env).filter((db): db is TestServerDatabase => db !== 'sqlite');
}

/** The URL of a test server (HOLDFAST_TEST_PG_URL / HOLDFAST_TEST_MARIADB_URL, or the shared server). */
export function testServerUrl(db: TestServerDatabase, env: NodeJS.ProcessEnv = process.env): URL {
  const { env: name, fallback } = SERVER_URLS[db];
  return new URL(env[name] ?? fallback);
}

/** The TCP port of a test server: what a TcpProxy in front of it forwards to. */
export function testServerPort(db: TestServerDatabase): number {
  return Number(testServerUrl(db).port);
}

/**
 * TypeORM options for a test database. Servers come from HOLDFAST_TEST_PG_URL
 * (default postgres://postgres@127.0.0.1:5432/test) and HOLDFAST_TEST_MARIADB_URL
 * (default mysql://root@127.0.0.1:3306/test).
 */
export function testDataSourceOptions(
  db: TestDatabase,
  overrides: TestDataSourceOverrides = {},
): DataSourceOptions {
  switch (db) {
    case 'sqlite':
      return {
        type: 'better-sqlite3',
        database: overrides.sqliteFile ?? tempSqliteFile(),
        enableWAL: true,
        timeout: 10_000,
      } as DataSourceOptions;
    case 'postgres': {
      const url = testServerUrl('postgres');
      if (overrides.port) url.port = String(overrides.port);
      return {
        type: 'postgres',
        url: url.toString(),
        poolSize: overrides.poolSize ?? 10,
        connectTimeoutMS: 3_000,
        extra: { max: overrides.poolSize ?? 10, ...overrides.extra },
      } as DataSourceOptions;
    }
    case 'mariadb': {
      const url = testServerUrl('mariadb');
      if (overrides.port) url.port = String(overrides.port);
      return {
        type: 'mariadb',
        url: url.toString(),
        timezone: 'Z',
        poolSize: overrides.poolSize ?? 10,
        connectTimeout: 3_000,
        extra: { connectionLimit: overrides.poolSize ?? 10, ...overrides.extra },
      } as DataSourceOptions;
    }
  }
}

/** An initialized DataSource for a test database. */
export async function createTestDataSource(
  db: TestDatabase,
  overrides: TestDataSourceOverrides = {},
): Promise<DataSource> {
  return new DataSource(testDataSourceOptions(db, overrides)).initialize();
}

/** A table prefix no other test (or test process) uses: `hf_<tag>_<random>_`. */
export function uniqueTablePrefix(tag = 't'): string {
  return `hf_${tag.replace(/[^A-Za-z0-9_]/g, '_')}_${randomBytes(4).toString('hex')}_`;
}
