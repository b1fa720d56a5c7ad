import { testDatabases, type TestDatabase } from '@holdfast/testing';

type ServerDatabase = Exclude<TestDatabase, 'sqlite'>;

/** The selected test databases that are servers (a network path can be cut or silenced): no SQLite. */
export function serverDatabases(): ServerDatabase[] {
  return testDatabases().filter((db): db is ServerDatabase => db !== 'sqlite');
}

const URL_ENV = { postgres: 'HOLDFAST_TEST_PG_URL', mariadb: 'HOLDFAST_TEST_MARIADB_URL' } as const;
const DEFAULT_URL = {
  postgres: 'postgres://postgres@127.0.0.1:5432/test',
  mariadb: 'mysql://root@127.0.0.1:3306/test',
};

/** The test server's URL (HOLDFAST_TEST_PG_URL / HOLDFAST_TEST_MARIADB_URL, or the shared server). */
function serverUrl(db: ServerDatabase): URL {
  return new URL(process.env[URL_ENV[db]] ?? DEFAULT_URL[db]);
}

/** The port the test server listens on. */
export function serverPort(db: ServerDatabase): number {
  return Number(serverUrl(db).port);
}

/** The environment that points a worker at the test server through `host:port` (a namespace's way in). */
export function serverUrlThrough(db: ServerDatabase, host: string, port: number): NodeJS.ProcessEnv {
  const url = serverUrl(db);
  url.hostname = host;
  url.port = String(port);
  return { [URL_ENV[db]]: url.toString() };
}
