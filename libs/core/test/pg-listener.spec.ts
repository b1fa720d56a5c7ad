import { monotonicMillis, PgListener, withTimeout } from '@holdfast/core/kit';
import { createTestDataSource, TcpProxy, testServerPort } from '@holdfast/testing';
import type { DataSource } from 'typeorm';

/**
 * PostgreSQL's LISTEN connection (core's PgListener) whose path goes silent for good (#43): its
 * close() does not wait for a goodbye that never comes. pg's end() waits for the server to close
 * the socket; before, the inbox's shutdown waited on it for ever. PostgreSQL only (jest.config.js
 * leaves it out of runs without it).
 */
describe('PgListener on a connection gone silent', () => {
  it('close() returns within its bound and destroys the socket', async () => {
    const proxy = new TcpProxy(testServerPort('postgres'));
    let viaProxy: DataSource | undefined;
    try {
      await proxy.start();
      viaProxy = await createTestDataSource('postgres', { port: proxy.port, poolSize: 1 });
      const dropped: unknown[] = [];
      const listener = new PgListener(viaProxy, {
        channel: 'holdfast_pg_listener_test',
        applicationName: 'holdfast-test-listen',
        connectTimeoutMs: 5_000,
        onNotification: () => undefined,
        onDropped: (error) => dropped.push(error),
      });
      await listener.listen();
      proxy.blackholeOpen({ passCloses: false });

      const started = monotonicMillis();
      const closed = await withTimeout(
        listener.close().then(() => true),
        15_000,
        () => false,
      );
      expect(closed).toBe(true);
      console.log(`[pg-listener] closed in ${monotonicMillis() - started} ms on a silent path`);
      const socket = (listener as unknown as { client: { connection: { stream: { destroyed: boolean } } } })
        .client.connection.stream;
      expect(socket.destroyed).toBe(true);
      expect(dropped).toEqual([]); // a close of ours is not a drop
    } finally {
      await proxy.stop();
      await viaProxy?.destroy().catch(() => undefined);
    }
  }, 30_000);
});
