import type { ChildProcess, Serializable } from 'node:child_process';
import { join } from 'node:path';
import { SchemaManager, sqlClientFor, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  forkTs,
  tempSqliteFile,
  testDatabases,
  uniqueTablePrefix,
  waitForExit,
  waitForMessage,
  waitUntil,
} from '@holdfast/testing';
import { seedInbox } from './support/seed-inbox';
import { INBOX_TABLES } from '@holdfast/inbox';

const WORKER = join(__dirname, 'workers', 'pause-worker.ts');
/** Well past the workers' pollInterval (100 ms): the longest a node may use the paused types it read before a pause. */
const PAUSE_SEEN_MS = 1_000;

type Report = { t: string; id?: string; type?: string; op?: string; error?: string };

/**
 * A type paused through MessageManagement in one process stops its delivery in another process
 * (a delivering node), while another type keeps flowing; resuming it delivers what waited.
 */
describe('pausing a message type across processes', () => {
  it.each(testDatabases())(
    '[%s] a pause from one node stops the type on another, other types flow, resume delivers the rest',
    async (db) => {
      const sqliteFile = db === 'sqlite' ? tempSqliteFile('inbox-pause') : undefined;
      const dataSource = await createTestDataSource(db, { sqliteFile });
      const sql = sqlClientFor(dataSource);
      const prefix = uniqueTablePrefix(`inbox_pause_${db}`);
      const mode = db === 'sqlite' ? 'leader' : 'competing';
      const workers: ChildProcess[] = [];
      try {
        await seedInbox(dataSource, prefix, [], mode);
        await new SchemaManager(sql).apply(INBOX_TABLES.pause, prefix, 'create');
        const delivered = new Map<string, string>();
        const deliverer = forkTs(WORKER, [db, prefix, 'deliver', mode, sqliteFile ?? '']);
        const admin = forkTs(WORKER, [db, prefix, 'admin', mode, sqliteFile ?? '']);
        workers.push(deliverer, admin);
        deliverer.on('message', (m: Report) => {
          if (m.t === 'delivered') delivered.set(m.id!, m.type!);
        });
        await Promise.all(workers.map((c) => waitForMessage(c, (m: Report) => m.t === 'ready', 60_000)));
        const command = async (message: Serializable, op: string) => {
          const answer = waitForMessage(
            admin,
            (m: Report) => (m.t === 'done' || m.t === 'failed') && m.op === op,
          );
          admin.send(message);
          const reply = (await answer) as Report;
          if (reply.t === 'failed') throw new Error(`${op} failed in the worker: ${reply.error}`);
        };
        const accept = (name: string, ids: string[]) =>
          command(
            {
              t: 'accept',
              messages: ids.map((id) => ({ id, type: { namespace: 'shop', name }, payload: {} })),
            },
            'accept',
          );

        await command({ t: 'pause', type: 'shop:order', reason: 'supplier down' }, 'pause');
        await new Promise((r) => setTimeout(r, PAUSE_SEEN_MS));
        const orders = ['o1', 'o2', 'o3', 'o4', 'o5'];
        await accept('order', orders);
        await accept('refund', ['r1', 'r2', 'r3']);
        await waitUntil(() => ['r1', 'r2', 'r3'].every((id) => delivered.has(id)), { timeout: 30_000 });
        // More claims after the orders were accepted: a refund accepted later is delivered too.
        await accept('refund', ['r4']);
        await waitUntil(() => delivered.has('r4'), { timeout: 30_000 });
        expect(orders.filter((id) => delivered.has(id))).toEqual([]);
        const [waiting] = await sql.query<{ n: unknown }>(
          statement(`SELECT COUNT(*) AS n FROM ${prefix}COR_MESSAGE WHERE PAYLOAD_TYPE_NAME = 'order'`),
        );
        expect(Number(waiting.n)).toBe(orders.length);
        const [row] = await sql.query<{ paused_by: string; reason: string }>(
          statement(
            `SELECT PAUSED_BY AS paused_by, REASON AS reason FROM ${prefix}HOLDFAST_INBOX_PAUSE WHERE TYPE_KEY = 'shop:order'`,
          ),
        );
        expect(row).toEqual({ paused_by: `worker ${admin.pid}`, reason: 'supplier down' });

        await command({ t: 'resume', type: 'shop:order' }, 'resume');
        await waitUntil(() => orders.every((id) => delivered.has(id)), { timeout: 30_000 });
        expect([...delivered.values()].filter((type) => type === 'shop:order')).toHaveLength(orders.length);
      } finally {
        for (const child of workers) child.send?.({ t: 'stop' });
        await Promise.all(workers.map((c) => waitForExit(c, 10_000)));
        for (const table of [
          'COR_MESSAGE',
          'HOLDFAST_INBOX_LEASE',
          'HOLDFAST_INBOX_GROUP',
          'HOLDFAST_INBOX_PAUSE',
          'simba_mutex',
        ])
          await sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}${table}`)).catch(() => undefined);
        await dataSource.destroy();
      }
    },
    120_000,
  );
});
