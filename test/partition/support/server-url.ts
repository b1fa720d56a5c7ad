import {
  testServerDatabases,
  testServerPort,
  testServerUrl,
  type TestServerDatabase,
} from '@holdfast/testing';

type ServerDatabase = TestServerDatabase;

/** The selected test databases that are servers (a network path can be cut or silenced): no SQLite. */
export const serverDatabases = testServerDatabases;

/** The port the test server listens on. */
export const serverPort = testServerPort;

const URL_ENV = { postgres: 'HOLDFAST_TEST_PG_URL', mariadb: 'HOLDFAST_TEST_MARIADB_URL' } as const;

/** The environment that points a worker at the test server through `host:port` (a namespace's way in). */
export function serverUrlThrough(db: ServerDatabase, host: string, port: number): NodeJS.ProcessEnv {
  const url = testServerUrl(db);
  url.hostname = host;
  url.port = String(port);
  return { [URL_ENV[db]]: url.toString() };
}
