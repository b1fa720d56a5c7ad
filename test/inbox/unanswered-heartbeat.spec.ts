import type { INestApplicationContext } from '@nestjs/common';
import { sqlClientFor, statement } from '@holdfast/core/kit';
import { createTestDataSource, TcpProxy, uniqueTablePrefix, waitUntil } from '@holdfast/testing';
import { MessageAcceptor } from '@holdfast/inbox';
import type { DataSource } from 'typeorm';
import { serverDatabases, serverPort } from '../partition/support/server-url';
import { inboxNode } from './support/inbox-node';

const ORDER = { namespace: 'test', name: 'order-placed' };
const MESSAGES = 8;

// The answer is lost on a network path: servers only (jest.config.js leaves this suite out of a
// SQLite-only run).
const databases = serverDatabases();

/** The heartbeat's UPDATE: it moves NEXT_RETRY only where it still holds this node's lease end. */
const isHeartbeat = (sent: string) =>
  /SET NEXT_RETRY/.test(sent) && /NEXT_RETRY >=/.test(sent) && !/RETURNING/.test(sent);

/**
 * A heartbeat whose UPDATE ran on the server but whose answer never reached the node (what a
 * connection reset in a switchover does): the rows hold the new lease end, the node does not know
 * it. Before, the next heartbeat found none of the rows its own, gave up every claim of the batch
 * (the messages not yet handled waited for the lease to end) and the delete of the handled ones
 * matched nothing, so they were handled a second time after the lease. The node now keeps the
 * lease end it asked for beside the one it knows until a heartbeat answers.
 */
describe('inbox: a heartbeat that ran but whose answer was lost', () => {
  it.each(databases)(
    '[%s] the batch goes on: every message handled once and deleted',
    async (db) => {
      const direct = await createTestDataSource(db);
      const sql = sqlClientFor(direct);
      const prefix = uniqueTablePrefix(`inbox_hb_${db}`);
      const proxy = new TcpProxy(serverPort(db));
      const handled = new Map<string, number>();
      const nodes: INestApplicationContext[] = [];
      let viaProxy: DataSource | undefined;
      let lost = false;
      try {
        const acceptorApp = await inboxNode({
          dataSource: direct,
          prefix,
          type: ORDER,
          inbox: { deliver: false },
        });
        nodes.push(acceptorApp);
        const ids = (
          await acceptorApp
            .get(MessageAcceptor)
            .acceptAll(Array.from({ length: MESSAGES }, (_, i) => ({ type: ORDER, payload: { i } })))
        ).map((r) => r.id);
        await proxy.start();
        proxy.loseAnswerTo((sent) => {
          const hit = isHeartbeat(sent);
          if (hit) lost = true;
          return hit;
        });
        viaProxy = await createTestDataSource(db, { port: proxy.port, poolSize: 4 });
        // One batch of all eight, handled one at a time for longer than a heartbeat interval
        // (visibilityTimeout / 3 = 2 s) each two messages: the batch outlives several heartbeats.
        nodes.push(
          await inboxNode({
            dataSource: viaProxy,
            prefix,
            type: ORDER,
            handle: async (message) => {
              handled.set(message.id, (handled.get(message.id) ?? 0) + 1);
              await new Promise((resolve) => setTimeout(resolve, 1_000));
            },
            inbox: {
              batchSize: MESSAGES,
              concurrency: 1,
              pollInterval: '200ms',
              visibilityTimeout: '6s',
              statementTimeout: '2s',
              wakeOnAccept: false,
              notify: false,
            },
          }),
        );
        await waitUntil(
          async () =>
            Number(
              (
                await sql.query<{ c: unknown }>(statement(`SELECT COUNT(*) AS c FROM ${prefix}COR_MESSAGE`))
              )[0].c,
            ) === 0,
          { timeout: 60_000, message: 'every message to be handled and deleted' },
        );
        expect(lost).toBe(true);
        expect([...handled.keys()].sort()).toEqual([...ids].sort());
        expect([...handled.values()].filter((n) => n > 1)).toEqual([]);
      } finally {
        for (const app of nodes.reverse()) await app.close().catch(() => undefined);
        await proxy.stop();
        await viaProxy?.destroy().catch(() => undefined);
        for (const table of ['COR_MESSAGE', 'HOLDFAST_INBOX_LEASE'])
          await sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}${table}`)).catch(() => undefined);
        await direct.destroy();
      }
    },
    120_000,
  );
});
