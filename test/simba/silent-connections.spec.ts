/**
 * A connection that goes silent for good (#43): two Simba processes, A and B, each reaching the
 * server through a TcpProxy of its own. A owns, and its coordination pool has every connection
 * open (readiness probes arrived together). Then every connection A has open goes silent for good
 * while new ones pass (`blackholeOpen`: a stateful firewall or NAT that lost its state). A may
 * keep the mutex on new connections, or step down and let B take it; then B is partitioned, and
 * A must own again within ttl + transition + 3 s, on new connections, and say what happened in
 * one outage warning. Before #43 A's silenced connections stayed checked out of its pool for good
 * (Simba's bound gave up waiting but left them in place), so A never contended again.
 * PostgreSQL and MariaDB (left out of a SQLite-only run by jest.config.js).
 */
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { monotonicMillis } from '@holdfast/core/kit';
import {
  createTestDataSource,
  forkTs,
  TcpProxy,
  testServerDatabases,
  testServerPort,
  uniqueTablePrefix,
  waitForExit,
  waitUntil,
} from '@holdfast/testing';
import { serverUrlThrough } from '../partition/support/server-url';

const WORKER = join(__dirname, 'workers', 'contender.worker.ts');
const TTL = 1_000;
const TRANSITION = 1_500;
/** The bound on A's takeover once B is partitioned. */
const TAKEOVER_BOUND = TTL + TRANSITION + 3_000;

interface Node {
  name: string;
  child: ChildProcess;
  proxy: TcpProxy;
  events: { type: string; token?: number; up?: number; at: number }[];
  output: string[];
}

function startNode(
  name: string,
  db: 'postgres' | 'mariadb',
  proxy: TcpProxy,
  prefix: string,
  mutex: string,
): Node {
  const child = forkTs(WORKER, [db, prefix, mutex, '-', '-', String(TTL), String(TRANSITION)], {
    env: {
      ...process.env,
      ...serverUrlThrough(db, '127.0.0.1', proxy.port),
      SIMBA_WORKER_LOG_LEVELS: 'warn,error',
      NO_COLOR: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const node: Node = { name, child, proxy, events: [], output: [] };
  child.on('message', (m: { type: string; token?: number; up?: number }) =>
    node.events.push({ ...m, at: monotonicMillis() }),
  );
  for (const stream of [child.stdout!, child.stderr!])
    stream.on('data', (d: Buffer) => node.output.push(...d.toString().split('\n').filter(Boolean)));
  return node;
}

/** True while `node`'s last acquired/released report says it owns. */
function owns(node: Node): boolean {
  const last = node.events.filter((e) => e.type === 'acquired' || e.type === 'released').pop();
  return last?.type === 'acquired';
}

/**
 * `kept`: only the open connections go silent; A may renew on a new connection in time.
 * `stepped down`: the path also refuses new connections until B has taken over (a NAT rebooting
 * with its state lost), so A steps down first, as in the run; then new connections pass.
 */
const CASES = testServerDatabases().flatMap((db) =>
  (['kept', 'stepped down'] as const).map((variant) => [db, variant] as const),
);

describe('a Simba owner whose open connections go silent for good', () => {
  it.each(CASES)(
    '[%s] %s: A contends on new connections and owns within ttl + transition + 3 s of the other node’s partition',
    async (db, variant) => {
      const prefix = uniqueTablePrefix(`sil_${db}`);
      const mutex = 'silent';
      const nodes: Node[] = [];
      try {
        const [proxyA, proxyB] = [new TcpProxy(testServerPort(db)), new TcpProxy(testServerPort(db))];
        await Promise.all([proxyA.start(), proxyB.start()]);
        const a = startNode('A', db, proxyA, prefix, mutex);
        nodes.push(a);
        await waitUntil(() => owns(a), { timeout: 60_000, message: 'A to own' });
        const b = startNode('B', db, proxyB, prefix, mutex);
        nodes.push(b);
        await waitUntil(() => b.events.some((e) => e.type === 'ready'), {
          timeout: 60_000,
          message: 'B ready',
        });

        // Readiness probes arriving together: A's coordination pool opens every connection it has.
        a.child.send({ type: 'health', count: 4 });
        const health = await waitUntil(() => a.events.find((e) => e.type === 'health'), {
          timeout: 10_000,
          message: 'A health checks',
        });
        expect(health.up).toBe(4);

        const dropAt = monotonicMillis();
        const silenced = proxyA.connections;
        proxyA.blackholeOpen({ passCloses: false });
        if (variant === 'stepped down') {
          proxyA.blackhole(); // new connections refused as well, for now
          await waitUntil(() => owns(b), { timeout: TAKEOVER_BOUND, message: 'B to take over' });
          expect(owns(a)).toBe(false);
          proxyA.restore(); // new connections pass again; the silenced ones stay silent
        } else {
          // A renews on a new connection, or steps down and B takes over after the transition.
          await new Promise((resolve) => setTimeout(resolve, TTL + TRANSITION + 1_000));
          expect(owns(a) && owns(b)).toBe(false);
        }
        const bTookOver = owns(b);

        const partitionAt = monotonicMillis();
        proxyB.blackhole({ passCloses: false });
        await waitUntil(() => owns(a), {
          timeout: TAKEOVER_BOUND,
          message: `A to own within ${TAKEOVER_BOUND} ms of B's partition (B took over: ${bTookOver})`,
        });
        const ownedAfter = monotonicMillis() - partitionAt;
        // A owns on connections opened after the drop: the silenced ones never answer again.
        expect(proxyA.connections).toBeGreaterThan(proxyA.silencedConnections);
        const outageLines = a.output.filter((l) => /database is unavailable/.test(l));
        console.log(
          `[simba silent ${db} ${variant}] ${silenced} connection(s) through A's proxy silenced; B took over: ${bTookOver}; ` +
            `A owns ${ownedAfter} ms after B's partition (bound ${TAKEOVER_BOUND} ms), ` +
            `${Math.round(monotonicMillis() - dropAt)} ms after the drop; A's warnings:\n${a.output.join('\n')}`,
        );
        expect(outageLines.length).toBeLessThanOrEqual(1);
      } finally {
        for (const node of nodes) {
          node.child.kill('SIGKILL');
          await waitForExit(node.child).catch(() => undefined);
          await node.proxy.stop();
        }
        const dataSource = await createTestDataSource(db);
        await dataSource.query(`DROP TABLE IF EXISTS ${prefix}simba_mutex`).catch(() => undefined);
        await dataSource.destroy();
      }
    },
    120_000,
  );
});
