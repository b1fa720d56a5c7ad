/**
 * A connection that goes silent for good (#43): a delivering inbox node reaches the server
 * through a TcpProxy; while it delivers, every connection it has open goes silent for good and
 * new ones pass (`blackholeOpen`: a firewall or NAT that lost its state, closes dropped too).
 * Messages accepted afterwards by another node are delivered on new connections within a bound,
 * every message is delivered, and the node then shuts down within a bound (nothing of it waits on
 * a silenced socket). PostgreSQL (with LISTEN) and MariaDB; left out of a SQLite-only run by
 * jest.config.js.
 */
import type { INestApplicationContext } from '@nestjs/common';
import { monotonicMillis, sleep, sqlClientFor, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  TcpProxy,
  testServerDatabases,
  testServerPort,
  uniqueTablePrefix,
  waitUntil,
} from '@holdfast/testing';
import { MessageAcceptor } from '@holdfast/inbox';
import type { DataSource } from 'typeorm';
import { inboxNode } from './support/inbox-node';

const ORDER = { namespace: 'test', name: 'order-placed' };
const STATEMENT_TIMEOUT = 2_000;
const POLL = 200;
const VISIBILITY = 5_000;
/** Messages accepted after the drop: one bound for what the node waited on, a poll, 3 s for a busy machine. */
const AFTER_BOUND = STATEMENT_TIMEOUT + POLL + 3_000;
/** Shutdown: the drain's statements (a bound each) and the pools' close, with room to spare. */
const CLOSE_BOUND = 15_000;

describe('a delivering inbox node whose open connections go silent for good', () => {
  it.each(testServerDatabases())(
    '[%s] delivers on new connections, loses nothing, and shuts down within a bound',
    async (db) => {
      const direct = await createTestDataSource(db);
      const sql = sqlClientFor(direct);
      const prefix = uniqueTablePrefix(`inbox_sil_${db}`);
      const proxy = new TcpProxy(testServerPort(db));
      const delivered = new Set<string>();
      let duplicates = 0;
      let acceptOnly: INestApplicationContext | undefined;
      let node: INestApplicationContext | undefined;
      let viaProxy: DataSource | undefined;
      try {
        acceptOnly = await inboxNode({ dataSource: direct, prefix, type: ORDER, inbox: { deliver: false } });
        const acceptor = acceptOnly.get(MessageAcceptor);
        const accept = async (tag: string, n: number) =>
          (
            await acceptor.acceptAll(
              Array.from({ length: n }, (_, i) => ({ type: ORDER, payload: { tag, i } })),
            )
          ).map((r) => r.id);
        await proxy.start();
        viaProxy = await createTestDataSource(db, { port: proxy.port, poolSize: 4 });
        node = await inboxNode({
          dataSource: viaProxy,
          prefix,
          type: ORDER,
          handle: async (message) => {
            await sleep(20);
            if (delivered.has(message.id)) duplicates++;
            delivered.add(message.id);
          },
          inbox: {
            batchSize: 10,
            pollInterval: POLL,
            visibilityTimeout: VISIBILITY,
            statementTimeout: STATEMENT_TIMEOUT,
          },
        });

        const before = await accept('before', 200);
        await waitUntil(() => delivered.size >= 20, { timeout: 30_000, message: 'deliveries to start' });
        const silenced = proxy.connections;
        proxy.blackholeOpen({ passCloses: false });
        const dropAt = monotonicMillis();
        const after = await accept('after', 20);
        await waitUntil(() => after.every((id) => delivered.has(id)), {
          timeout: AFTER_BOUND,
          interval: 100,
          message: `the messages accepted after the drop to be delivered within ${AFTER_BOUND} ms`,
        });
        const afterMs = monotonicMillis() - dropAt;
        const all = [...before, ...after];
        // What the node had claimed on a silenced connection comes back after its lease.
        await waitUntil(() => all.every((id) => delivered.has(id)), {
          timeout: VISIBILITY + AFTER_BOUND + 10_000,
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
        expect(proxy.connections).toBeGreaterThan(proxy.silencedConnections);

        const closing = monotonicMillis();
        const closed = node.close().then(() => true);
        node = undefined;
        let ceiling: NodeJS.Timeout | undefined;
        const closedInTime = await Promise.race([
          closed,
          new Promise<boolean>((resolve) => (ceiling = setTimeout(() => resolve(false), CLOSE_BOUND))),
        ]);
        clearTimeout(ceiling);
        const closeMs = monotonicMillis() - closing;
        console.log(
          `[inbox silent ${db}] ${silenced} connection(s) silenced while delivering; the later messages ` +
            `delivered ${afterMs} ms after the drop, ${all.length} delivered (${duplicates} twice); ` +
            `the node closed in ${closeMs} ms`,
        );
        expect(closedInTime).toBe(true);
      } finally {
        await proxy.stop();
        await node?.close().catch(() => undefined);
        await acceptOnly?.close();
        await viaProxy?.destroy().catch(() => undefined);
        for (const table of ['COR_MESSAGE', 'HOLDFAST_INBOX_LEASE'])
          await sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}${table}`)).catch(() => undefined);
        await direct.destroy();
      }
    },
    120_000,
  );
});
