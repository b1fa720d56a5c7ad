import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import { SchemaManager, sleep, sqlClientFor, statement } from '@holdfast/core/kit';
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
import { InboxModule, MessageAcceptor, INBOX_TABLES } from '@holdfast/inbox';

const WORKER = join(__dirname, 'workers', 'cleanup-worker.ts');
const NODES = 3;
/** The workers' cleanupInterval. */
const INTERVAL_MS = 1_000;
/** How long each phase watches the cluster clean (an observation period, not a bound). */
const WATCH_MS = 6_000;

interface Pass {
  pid: number;
  rows: number;
}

/**
 * The expiry cleanup runs on one node per tick for the whole cluster, with real processes:
 * three nodes clean every second while the parent keeps adding expired messages, so every
 * cleanup pass finds rows and logs them. Over a watched period the cluster runs at most one
 * pass per tick of the database clock (plus one begun before the period), where nodes that each
 * cleaned at every tick would run about three; the other nodes count skipped ticks. Then the
 * node that cleaned last is SIGKILLed and another node cleans at a later tick.
 *
 * PostgreSQL and MariaDB: competing mode, ticks claimed in HOLDFAST_INBOX_LEASE. SQLite (leader
 * mode, its only one): the Simba leader cleans, and after its SIGKILL the new leader does.
 */
describe('inbox expiry cleanup once per cluster per tick', () => {
  it.each(testDatabases())(
    `[%s] ${NODES} nodes: one cleans per tick, another takes over after a SIGKILL`,
    async (db) => {
      const mode = db === 'sqlite' ? 'leader' : 'competing';
      const sqliteFile = db === 'sqlite' ? tempSqliteFile('inbox-cleanup') : undefined;
      const dataSource = await createTestDataSource(db, { sqliteFile, poolSize: 4 });
      const sql = sqlClientFor(dataSource);
      const prefix = uniqueTablePrefix(`inbox_clean_${db}`);
      const workers = new Set<ChildProcess>();
      const passes: Pass[] = [];
      const ticks = new Map<number, { ran: number; skipped: number }>();
      const acceptor = await Test.createTestingModule({
        imports: [InboxModule.forRoot({ dataSource, tablePrefix: prefix, schema: 'create', deliver: false })],
      })
        .compile()
        .then((m) => m.init());
      let feeding = true;
      let feeder: Promise<void> | undefined;
      try {
        await new SchemaManager(sql).apply(INBOX_TABLES.lease, prefix, 'create');
        // Expired messages all along, so every cleanup pass that runs deletes some and says so.
        const accept = acceptor.get(MessageAcceptor);
        feeder = (async () => {
          while (feeding) {
            const expiration = new Date(Date.now() - 60_000);
            await accept.acceptAll(
              Array.from({ length: 5 }, (_, i) => ({
                type: { namespace: 'cleanup', name: 'item' },
                payload: { i },
                expiration,
              })),
            );
            await sleep(100);
          }
        })();

        const spawn = (): ChildProcess => {
          const child = forkTs(WORKER, [db, prefix, mode, sqliteFile ?? '']);
          workers.add(child);
          child.on('exit', () => workers.delete(child));
          child.on(
            'message',
            (m: { t: string; pid: number; rows?: number; ran?: number; skipped?: number }) => {
              if (m.t === 'cleaned') passes.push({ pid: m.pid, rows: m.rows! });
              if (m.t === 'ticks') ticks.set(m.pid, { ran: m.ran ?? 0, skipped: m.skipped ?? 0 });
            },
          );
          return child;
        };
        const nodes = Array.from({ length: NODES }, spawn);
        await Promise.all(nodes.map((c) => waitForMessage(c, (m: { t: string }) => m.t === 'ready', 60_000)));
        // Leader mode needs a leader first; either way, wait for the first pass.
        await waitUntil(() => passes.length > 0, { timeout: 30_000, message: 'a first cleanup pass' });

        /** Passes during WATCH_MS, and the number of database-clock ticks that period spans. */
        const watch = async () => {
          const from = passes.length;
          const start = await sql.nowMillis();
          await sleep(WATCH_MS);
          const end = await sql.nowMillis();
          const seen = passes.slice(from);
          const tickCount = Math.floor(end / INTERVAL_MS) - Math.floor(start / INTERVAL_MS) + 1;
          return { seen, tickCount };
        };

        const before = await watch();
        const byPid = (seen: Pass[]) =>
          [...seen.reduce((m, p) => m.set(p.pid, (m.get(p.pid) ?? 0) + 1), new Map<number, number>())]
            .map(([pid, n]) => `${pid}: ${n}`)
            .join(', ');
        console.log(
          `[inbox cleanup ${db}] ${NODES} nodes (${mode}), ${before.tickCount} ticks: ${before.seen.length} ` +
            `cleanup passes (${byPid(before.seen)})`,
        );
        expect(before.seen.length).toBeGreaterThan(0);
        // One pass per tick at most (+1: a pass begun just before the period reports inside it).
        expect(before.seen.length).toBeLessThanOrEqual(before.tickCount + 1);
        const skipped = [...ticks.values()].reduce((sum, t) => sum + t.skipped, 0);
        expect(skipped).toBeGreaterThan(0);

        // The node that cleaned last dies; another node cleans at a later tick.
        const victimPid = passes[passes.length - 1].pid;
        const victim = nodes.find((c) => c.pid === victimPid)!;
        victim.kill('SIGKILL');
        await waitForExit(victim);
        const afterKill = passes.length;
        const takeover = await waitUntil(() => passes.slice(afterKill).find((p) => p.pid !== victimPid), {
          timeout: 60_000,
          message: 'a surviving node to clean',
        });
        expect(takeover.pid).not.toBe(victimPid);

        const after = await watch();
        console.log(
          `[inbox cleanup ${db}] after SIGKILL of ${victimPid}: ${after.tickCount} ticks, ` +
            `${after.seen.length} cleanup passes (${byPid(after.seen)})`,
        );
        expect(after.seen.every((p) => p.pid !== victimPid)).toBe(true);
        expect(after.seen.length).toBeGreaterThan(0);
        expect(after.seen.length).toBeLessThanOrEqual(after.tickCount + 1);
      } finally {
        feeding = false;
        await feeder?.catch(() => undefined);
        for (const child of [...workers]) child.send?.({ t: 'stop' });
        await Promise.all([...workers].map((c) => waitForExit(c, 10_000)));
        await acceptor.close();
        for (const table of ['COR_MESSAGE', 'HOLDFAST_INBOX_LEASE', 'simba_mutex']) {
          await sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}${table}`)).catch(() => undefined);
        }
        await dataSource.destroy();
      }
    },
    180_000,
  );
});
