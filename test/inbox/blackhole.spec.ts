import type { INestApplicationContext } from '@nestjs/common';
import { sleep, sqlClientFor, statement } from '@holdfast/core/kit';
import { createTestDataSource, TcpProxy, uniqueTablePrefix, waitUntil } from '@holdfast/testing';
import { MessageAcceptor } from '@holdfast/inbox';
import type { DataSource } from 'typeorm';
import { serverDatabases, serverPort } from '../partition/support/server-url';
import { inboxNode } from './support/inbox-node';

const ORDER = { namespace: 'test', name: 'order-placed' };
/** How long the network path stays silent. */
const BLACKHOLE_MS = 4_000;

// A blackholed connection needs a network path: servers only (jest.config.js leaves this suite
// out of a SQLite-only run).
const databases = serverDatabases();

class Delivered {
  readonly ids = new Set<string>();
  count = 0;
}

/** A delivering inbox node (or an accept-only one) on `dataSource`. */
function startNode(dataSource: DataSource, prefix: string, delivered: Delivered, deliver: boolean) {
  return inboxNode({
    dataSource,
    prefix,
    type: ORDER,
    handle: deliver
      ? async (message) => {
          await sleep(20);
          delivered.ids.add(message.id);
          delivered.count++;
        }
      : undefined,
    inbox: {
      deliver,
      batchSize: 10,
      pollInterval: '200ms',
      visibilityTimeout: '5s',
      wakeOnAccept: false,
      notify: false,
    },
  });
}

/**
 * A delivering node whose database connections go silent (the network path stops forwarding
 * without closing anything), then come back: the node delivers again without any manual step,
 * and no message accepted before, during or after the outage is lost.
 */
describe('inbox with a blackholed database connection', () => {
  it.each(databases)(
    '[%s] delivers again after the network returns, and loses nothing',
    async (db) => {
      const direct = await createTestDataSource(db);
      const sql = sqlClientFor(direct);
      const prefix = uniqueTablePrefix(`inbox_bh_${db}`);
      const proxy = new TcpProxy(serverPort(db));
      const delivered = new Delivered();
      let acceptOnly: INestApplicationContext | undefined;
      let node: INestApplicationContext | undefined;
      let viaProxy: DataSource | undefined;
      try {
        // Another replica accepts, straight to the database; the one that delivers is behind the proxy.
        acceptOnly = await startNode(direct, prefix, delivered, false);
        const acceptor = acceptOnly.get(MessageAcceptor);
        const accept = async (tag: string, n: number) =>
          (
            await acceptor.acceptAll(
              Array.from({ length: n }, (_, i) => ({ type: ORDER, payload: { tag, i } })),
            )
          ).map((r) => r.id);
        await proxy.start();
        viaProxy = await createTestDataSource(db, { port: proxy.port, poolSize: 4 });
        node = await startNode(viaProxy, prefix, delivered, true);

        const before = await accept('before', 200);
        await waitUntil(() => delivered.ids.size >= 20, { timeout: 30_000, message: 'deliveries to start' });
        // A real dropped path: not even the server's close of a silent transaction gets through.
        proxy.blackhole({ passCloses: false });
        const during = await accept('during', 20);
        await sleep(BLACKHOLE_MS);
        proxy.restore();
        const after = await accept('after', 20);

        await waitUntil(() => after.every((id) => delivered.ids.has(id)), {
          timeout: 60_000,
          message: 'the messages accepted after the restore to be delivered',
        });
        const all = [...before, ...during, ...after];
        await waitUntil(() => all.every((id) => delivered.ids.has(id)), {
          timeout: 60_000,
          message: 'every accepted message to be delivered',
        });
        await waitUntil(
          async () =>
            Number(
              (
                await sql.query<{ c: unknown }>(statement(`SELECT COUNT(*) AS c FROM ${prefix}COR_MESSAGE`))
              )[0].c,
            ) === 0,
          { timeout: 30_000, message: 'the delivered messages to be deleted' },
        );
        expect(all.filter((id) => !delivered.ids.has(id))).toEqual([]);
        console.log(
          `[inbox blackhole ${db}] ${all.length} delivered, ${delivered.count - delivered.ids.size} duplicates`,
        );
      } finally {
        // Today's code leaves connections hanging: cut them so the node can close.
        await proxy.stop();
        let ceiling: NodeJS.Timeout | undefined;
        await Promise.race([
          node?.close(),
          new Promise((resolve) => (ceiling = setTimeout(resolve, 15_000))),
        ]).catch(() => undefined);
        clearTimeout(ceiling);
        await acceptOnly?.close();
        await viaProxy?.destroy().catch(() => undefined);
        for (const table of ['COR_MESSAGE', 'HOLDFAST_INBOX_LEASE'])
          await sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}${table}`)).catch(() => undefined);
        await direct.destroy();
      }
    },
    180_000,
  );
});
