import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { SchemaManager, sqlClientFor, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  forkTs,
  testDatabases,
  uniqueTablePrefix,
  waitForExit,
  waitForMessage,
  type TestDatabase,
} from '@holdfast/testing';
import { INBOX_TABLES } from '@holdfast/inbox';

const WORKER = join(__dirname, 'workers', 'accept-deliver-worker.ts');
const PROCESSES = 3;
const RATE = 20;
const SECONDS = Number(process.env.HOLDFAST_INBOX_LOAD_SECONDS ?? 15);

const databases = testDatabases().filter((db): db is Exclude<TestDatabase, 'sqlite'> => db !== 'sqlite');

/**
 * Ordinary concurrency, no fault: three processes each accept about 20 messages a second while
 * they deliver them (batch 10, a 300 ms handler). No accept may fail (deadlock victims are
 * retried inside the library), every message is handled, and none by two workers.
 */
if (databases.length)
  describe('inbox accept while delivering, 3 processes', () => {
    it.each(databases)(
      `[%s] ${PROCESSES} processes × ~${RATE} accepts/s for ${SECONDS} s: 0 failed accepts, each message handled once`,
      async (db) => {
        const dataSource = await createTestDataSource(db);
        const sql = sqlClientFor(dataSource);
        const prefix = uniqueTablePrefix(`inbox_load_${db}`);
        const table = `${prefix}COR_MESSAGE`;
        const workers: ChildProcess[] = [];
        try {
          await new SchemaManager(sql).apply(INBOX_TABLES.message, prefix, 'create');
          await new SchemaManager(sql).apply(INBOX_TABLES.lease, prefix, 'create');
          const handled = new Map<string, number[]>();
          const results: { accepted: number; failures: string[] }[] = [];
          for (let i = 0; i < PROCESSES; i++) {
            const child = forkTs(WORKER, [db, prefix, String(RATE), String(SECONDS)]);
            child.on(
              'message',
              (m: { t: string; id?: string; pid?: number; accepted?: number; failures?: string[] }) => {
                if (m.t === 'handled') handled.set(m.id!, [...(handled.get(m.id!) ?? []), m.pid!]);
                if (m.t === 'accepted') results.push({ accepted: m.accepted!, failures: m.failures! });
              },
            );
            workers.push(child);
          }
          await Promise.all(
            workers.map((c) => waitForMessage(c, (m: { t: string }) => m.t === 'ready', 60_000)),
          );
          for (const child of workers) child.send({ t: 'go' });

          const deadline = Date.now() + SECONDS * 1000 + 90_000;
          let remaining = -1;
          while (Date.now() < deadline) {
            remaining = Number(
              (await sql.query<{ c: unknown }>(statement(`SELECT COUNT(*) AS c FROM ${table}`)))[0].c,
            );
            if (results.length === PROCESSES && remaining === 0) break;
            await new Promise((r) => setTimeout(r, 250));
          }
          const stats = workers.map((c) =>
            waitForMessage<{ t: string; retries: number }>(c, (m: { t: string }) => m.t === 'stats', 10_000),
          );
          for (const child of workers) child.send({ t: 'stop' });
          const retries = (await Promise.all(stats)).map((s) => s.retries);
          const accepted = results.reduce((sum, r) => sum + r.accepted, 0);
          const failures = results.flatMap((r) => r.failures);
          const twice = [...handled.entries()].filter(([, pids]) => pids.length > 1);
          console.log(
            `[inbox accept under load ${db}] ${PROCESSES} processes, ${accepted} accepts, ${failures.length} failed, ` +
              `${handled.size} handled, ${twice.length} handled twice, SQL retries per process: ${retries.join(', ')}`,
          );
          expect(failures).toEqual([]);
          expect(accepted).toBeGreaterThan(PROCESSES * RATE * SECONDS * 0.5);
          expect(remaining).toBe(0);
          expect(handled.size).toBe(accepted);
          expect(twice).toEqual([]);
        } finally {
          await Promise.all(workers.map((c) => waitForExit(c, 15_000)));
          await sql.execute(statement(`DROP TABLE IF EXISTS ${table}`)).catch(() => undefined);
          await sql
            .execute(statement(`DROP TABLE IF EXISTS ${prefix}HOLDFAST_INBOX_LEASE`))
            .catch(() => undefined);
          await dataSource.destroy();
        }
      },
      240_000,
    );
  });
