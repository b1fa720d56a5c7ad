import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { sqlClientFor, statement } from '@holdfast/core/kit';
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

const WORKER = join(__dirname, 'workers', 'slow-handler-worker.ts');
const MESSAGES = 3;
const VISIBILITY_MS = 1_000;
const HANDLER_MS = 3 * VISIBILITY_MS;

/**
 * Heartbeats across processes: two nodes, handlers that run three times the visibility timeout.
 * The running node renews its claims, so no node (itself included) takes a message again while
 * it runs: every message is handled exactly once. Competing nodes on PostgreSQL and MariaDB,
 * leader mode on SQLite.
 */
describe('inbox heartbeats, two processes', () => {
  it.each(testDatabases())(
    `[%s] a handler running 3x the visibility timeout is delivered exactly once`,
    async (db) => {
      const mode = db === 'sqlite' ? 'leader' : 'competing';
      const sqliteFile = db === 'sqlite' ? tempSqliteFile('inbox-heartbeat') : undefined;
      const dataSource = await createTestDataSource(db, { sqliteFile });
      const sql = sqlClientFor(dataSource);
      const prefix = uniqueTablePrefix(`inbox_hb_${db}`);
      const table = `${prefix}COR_MESSAGE`;
      const children: ChildProcess[] = [];
      const started = new Map<string, number>();
      const finished = new Map<string, number>();
      try {
        const ids = await seedInbox(
          dataSource,
          prefix,
          Array.from({ length: MESSAGES }, (_, i) => ({
            type: { namespace: 'slow', name: 'item' },
            payload: { i },
          })),
          mode,
        );
        for (let i = 0; i < 2; i++) {
          const child = forkTs(WORKER, [
            db,
            prefix,
            String(VISIBILITY_MS),
            String(HANDLER_MS),
            mode,
            sqliteFile ?? '',
          ]);
          children.push(child);
          child.on('message', (m: { t: string; id?: string }) => {
            const seen = m.t === 'started' ? started : m.t === 'finished' ? finished : undefined;
            if (seen && m.id) seen.set(m.id, (seen.get(m.id) ?? 0) + 1);
          });
        }
        await Promise.all(
          children.map((c) => waitForMessage(c, (m: { t: string }) => m.t === 'ready', 60_000)),
        );
        const count = async () =>
          Number((await sql.query<{ c: unknown }>(statement(`SELECT COUNT(*) AS c FROM ${table}`)))[0].c);
        await waitUntil(async () => finished.size === MESSAGES && (await count()) === 0, {
          timeout: 60_000,
          interval: 200,
          message: 'every message handled and deleted',
        });
        // A few more polls and heartbeats: nothing is started again.
        await new Promise((resolve) => setTimeout(resolve, VISIBILITY_MS));
        expect(ids.map((id) => started.get(id))).toEqual(ids.map(() => 1));
        expect(ids.map((id) => finished.get(id))).toEqual(ids.map(() => 1));
      } finally {
        for (const child of children) child.send?.({ t: 'stop' });
        await Promise.all(children.map((c) => waitForExit(c, 10_000)));
        await sql.execute(statement(`DROP TABLE IF EXISTS ${table}`)).catch(() => undefined);
        await sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}simba_mutex`)).catch(() => undefined);
        await dataSource.destroy();
      }
    },
    120_000,
  );
});
