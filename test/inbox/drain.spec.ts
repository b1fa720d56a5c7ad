import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import {
  createTestDataSource,
  forkTs,
  tempSqliteFile,
  testDatabases,
  uniqueTablePrefix,
  waitForExit,
  waitUntil,
} from '@holdfast/testing';
import { seedInbox } from './support/seed-inbox';

const WORKER = join(__dirname, 'workers', 'drain-worker.ts');
const MESSAGES = 200;
/** A's handlers are slow, so A is still busy when B is ready however long B takes to start. */
const A_HANDLER_MS = 200;
const B_HANDLER_MS = 10;

/**
 * Drain on SIGTERM across processes: node A claims a batch (two groups delivered one after the
 * other, 200 ms each: 20 s of work per group); B starts and waits behind A's groups (strict order
 * per group). A SIGTERM lets A's two running handlers finish, hands the rest of its batch back at
 * once, and node B delivers everything left within a few polls, long before the 60 s visibility
 * timeout. Every message is handled exactly once.
 */
describe('inbox drain on SIGTERM, two processes', () => {
  it.each(testDatabases())(
    '[%s] the second node takes the handed-back messages at once',
    async (db) => {
      const sqliteFile = db === 'sqlite' ? tempSqliteFile('inbox-drain') : undefined;
      const dataSource = await createTestDataSource(db, { sqliteFile });
      const prefix = uniqueTablePrefix(`drain_${db}`);
      const children: ChildProcess[] = [];
      const done = new Map<string, number[]>();
      let startedByA = 0;
      try {
        const ids = await seedInbox(
          dataSource,
          prefix,
          Array.from({ length: MESSAGES }, (_, i) => ({
            type: { namespace: 'drain', name: 'item' },
            payload: { g: i % 2 },
          })),
        );

        const spawn = (handlerMs: number) => {
          const child = forkTs(WORKER, [db, prefix, sqliteFile ?? '', String(handlerMs)]);
          children.push(child);
          const messages: Array<{ t: string; id?: string }> = [];
          child.on('message', (m: { t: string; id?: string; pid: number }) => {
            messages.push(m);
            if (m.t === 'start' && child === children[0]) startedByA++;
            if (m.t === 'done' && m.id) done.set(m.id, [...(done.get(m.id) ?? []), m.pid]);
          });
          return { child, messages };
        };
        const a = spawn(A_HANDLER_MS);
        await waitUntil(() => done.size >= 2, { timeout: 30_000, message: 'node A delivering' });
        const b = spawn(B_HANDLER_MS);
        await waitUntil(() => b.messages.some((m) => m.t === 'ready'), {
          timeout: 30_000,
          message: 'node B ready',
        });
        const startedBeforeTerm = startedByA;
        a.child.kill('SIGTERM');
        const code = await waitForExit(a.child, 30_000);
        // Nest re-raises the signal once the app has closed: a clean exit ends by SIGTERM.
        expect({ code, signal: a.child.signalCode }).toEqual(
          code === 0 ? { code: 0, signal: null } : { code: null, signal: 'SIGTERM' },
        );
        // A started at most the handlers already running (one per group) after the SIGTERM.
        expect(startedByA).toBeLessThanOrEqual(startedBeforeTerm + 2);
        await waitUntil(() => done.size >= MESSAGES, {
          timeout: 20_000,
          message: `every message handled, by B long before the 60 s visibility timeout (${done.size} so far)`,
        });
        expect(new Set(done.keys())).toEqual(new Set(ids));
        const twice = [...done].filter(([, pids]) => pids.length > 1);
        expect(twice).toEqual([]);
        const byB = [...done.values()].filter((pids) => pids[0] === b.child.pid).length;
        expect(byB).toBeGreaterThan(0);
        console.log(`[inbox drain ${db}] ${MESSAGES} messages: A ${MESSAGES - byB}, B ${byB}, none twice`);
      } finally {
        for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
        await Promise.all(children.map((c) => waitForExit(c, 10_000).catch(() => undefined)));
        await dataSource.destroy();
      }
    },
    120_000,
  );
});
