/**
 * A coordination pool whose connections went silent for good (#43) closes within a bound and
 * leaves no socket open: the drivers' end() says goodbye on each connection and waits for the
 * server to close it, which a silent path never does, and a socket left waiting keeps the process
 * alive after app.close(). PostgreSQL and MariaDB (left out of a SQLite-only run by jest.config.js).
 */
import type { Socket } from 'node:net';
import { configureCoordinationPool } from '@holdfast/core';
import { monotonicMillis, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  TcpProxy,
  testServerDatabases,
  testServerPort,
  testServerUrl,
  waitUntil,
} from '@holdfast/testing';
import { ModuleDatabase } from './support/module-database';
import type { DataSource } from 'typeorm';

/** The sockets of every connection the pool behind `dataSource` holds (pg-pool, mysql2). */
function poolSockets(dataSource: DataSource): Socket[] {
  const driver = dataSource.driver as unknown as {
    master?: { _clients?: { connection: { stream: Socket } }[] };
    pool?: { _allConnections?: { toArray(): { stream: Socket }[] } };
  };
  return [
    ...(driver.master?._clients ?? []).map((c) => c.connection.stream),
    ...(driver.pool?._allConnections?.toArray() ?? []).map((c) => c.stream),
  ];
}

describe.each(testServerDatabases())('a coordination pool gone silent [%s]', (db) => {
  it('closes within a bound and leaves no socket open', async () => {
    const proxy = new TcpProxy(testServerPort(db));
    let application: DataSource | undefined;
    try {
      await proxy.start();
      application = await createTestDataSource(db);
      // Only the module's own pool goes through the proxy.
      const url = testServerUrl(db);
      url.port = String(proxy.port);
      configureCoordinationPool(application, { size: 2, connection: { url: url.toString() } });
      const module = new ModuleDatabase({ dataSource: application });
      const sleep = db === 'postgres' ? 'SELECT pg_sleep(0.2)' : 'SELECT SLEEP(0.2)';
      await Promise.all([module.sql.query(statement(sleep)), module.sql.query(statement(sleep))]);
      const sockets = poolSockets(module.sql.dataSource);
      expect(sockets).toHaveLength(2);
      expect(proxy.connections).toBe(2);
      proxy.blackholeOpen({ passCloses: false });

      const started = monotonicMillis();
      await module.onApplicationShutdown();
      const closeMs = monotonicMillis() - started;

      await waitUntil(() => sockets.every((s) => s.destroyed), {
        timeout: 5_000,
        message: "every socket of the module's pool to be closed",
      });
      console.log(`[coordination pool close ${db}] ${closeMs} ms with 2 silent connections`);
      expect(closeMs).toBeLessThan(10_000);
    } finally {
      await proxy.stop();
      await application?.destroy();
    }
  }, 30_000);
});
