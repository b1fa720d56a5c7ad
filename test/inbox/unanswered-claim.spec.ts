import type { INestApplicationContext } from '@nestjs/common';
import { sqlClientFor, statement } from '@holdfast/core/kit';
import { createTestDataSource, TcpProxy, uniqueTablePrefix, waitUntil } from '@holdfast/testing';
import { MessageAcceptor } from '@holdfast/inbox';
import type { DataSource } from 'typeorm';
import { serverDatabases, serverPort } from '../partition/support/server-url';
import { inboxNode } from './support/inbox-node';

const ORDER = { namespace: 'test', name: 'order-placed' };

// The answer is lost on a network path: servers only (jest.config.js leaves this suite out of a
// SQLite-only run).
const databases = serverDatabases();

/**
 * A claim whose statement ran on the server but whose answer never reached the node (the
 * connection went silent right after the request was sent): the claim leased its rows to nobody.
 * The node knows the lease end it asked for, so its next claims take those rows back at once,
 * instead of leaving them to wait for the end of the visibility timeout.
 */
describe('inbox: a claim that ran but whose answer was lost', () => {
  it.each(databases)(
    '[%s] the node takes its rows back at its next claims, long before the visibility timeout',
    async (db) => {
      const direct = await createTestDataSource(db);
      const sql = sqlClientFor(direct);
      const prefix = uniqueTablePrefix(`inbox_lost_${db}`);
      const proxy = new TcpProxy(serverPort(db));
      const delivered: string[] = [];
      const nodes: INestApplicationContext[] = [];
      let viaProxy: DataSource | undefined;
      const node = async (dataSource: DataSource, deliver: boolean) => {
        const app = await inboxNode({
          dataSource,
          prefix,
          type: ORDER,
          handle: deliver ? (message) => void delivered.push(message.id) : undefined,
          inbox: {
            deliver,
            batchSize: 10,
            pollInterval: '200ms',
            visibilityTimeout: '2m',
            statementTimeout: '2s',
            wakeOnAccept: false,
            notify: false,
          },
        });
        nodes.push(app);
        return app;
      };
      try {
        const acceptor = (await node(direct, false)).get(MessageAcceptor);
        const ids = (
          await acceptor.acceptAll(Array.from({ length: 10 }, (_, i) => ({ type: ORDER, payload: { i } })))
        ).map((r) => r.id);
        await proxy.start();
        // The delivering node's first claim takes all ten. PostgreSQL runs it as one statement;
        // MySQL/MariaDB in a transaction whose COMMIT follows the UPDATE: lose the answer there.
        proxy.loseAnswerTo((sent, before) =>
          db === 'postgres'
            ? /SET NEXT_RETRY/.test(sent)
            : /COMMIT/i.test(sent) && before !== undefined && /SET NEXT_RETRY/.test(before),
        );
        viaProxy = await createTestDataSource(db, { port: proxy.port, poolSize: 4 });
        await node(viaProxy, true);
        // Leased to nobody for 2 minutes unless the node takes them back.
        await waitUntil(() => ids.every((id) => delivered.includes(id)), {
          timeout: 30_000,
          message: 'the ten messages of the unanswered claim to be delivered',
        });
        expect([...delivered].sort()).toEqual([...ids].sort());
        await waitUntil(
          async () =>
            Number(
              (
                await sql.query<{ c: unknown }>(statement(`SELECT COUNT(*) AS c FROM ${prefix}COR_MESSAGE`))
              )[0].c,
            ) === 0,
          { timeout: 30_000, message: 'the delivered messages to be deleted' },
        );
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
