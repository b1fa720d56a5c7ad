/**
 * A connection that goes silent for good (#43), for the lockers that talk to a database and for
 * @ScheduledLock: two instances, A and B, each reaching the server through a TcpProxy of its own.
 * Every connection A has open goes silent for good while new ones pass (`blackholeOpen`: a
 * firewall or NAT that lost its state); then B is partitioned, and A must act again on new
 * connections within a bound.
 * - LockerModule (lease-database, database): A is master at the drop; it keeps the lock on a new
 *   connection, or demotes and lets B take it; once B is cut off, A is master again; never two
 *   masters at once.
 * - @ScheduledLock: both run a per-second job; once B is cut off, A runs it again. Before #43 a
 *   tick's statements had no bound: the first tick on a silenced connection kept the module's one
 *   pooled connection checked out for good, and A never ran the job again.
 * PostgreSQL and MariaDB (left out of a SQLite-only run by jest.config.js).
 */
import { lockTable } from '@holdfast/locker';
import { monotonicMillis, sqlClientFor, tableName, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  TcpProxy,
  testServerDatabases,
  testServerPort,
  uniqueTablePrefix,
  waitUntil,
} from '@holdfast/testing';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { forkTs, waitForExit } from '@holdfast/testing';
import { LockerCluster, overlaps } from './cluster';
import type { ScheduledWorkerConfig, ScheduledWorkerMessage } from './workers/scheduled-worker';

const INTERVAL = 1_000;
const KEEP_ALIVE = 250;
/**
 * A's way back once B is cut off: B's lock lapses (a lease of one interval; the database locker's
 * transaction ended by the server about 1.5 keep-alives after its last statement, whole seconds
 * on MariaDB), a statement bound (2 s) for anything A still waited on, A's next attempt (one
 * interval), and 3 s for a busy machine.
 */
const BOUND = INTERVAL + 2_000 + 2_000 + INTERVAL + 3_000;

const CASES = testServerDatabases().flatMap((db) =>
  (['lease-database', 'database'] as const).map((type) => [db, type] as const),
);

describe('a locker master whose open connections go silent for good', () => {
  it.each(CASES)(
    '[%s] %s: A keeps its lock state and is master again on new connections once the other node is cut off',
    async (db, type) => {
      const cluster = new LockerCluster();
      const prefix = uniqueTablePrefix(`lks_${db}`);
      const proxies = new Map([
        ['x', new TcpProxy(testServerPort(db))],
        ['y', new TcpProxy(testServerPort(db))],
      ]);
      try {
        await Promise.all([...proxies.values()].map((p) => p.start()));
        const config = { db, prefix, interval: INTERVAL, keepAlive: KEEP_ALIVE, locker: { type } };
        for (const [name, proxy] of proxies) cluster.spawn({ ...config, name, port: proxy.port });
        // A is whichever gets the lock first; B the other.
        const a = (await cluster.firstAcquired([...proxies.keys()], -Infinity, 60_000)).name;
        const b = a === 'x' ? 'y' : 'x';
        const [proxyA, proxyB] = [proxies.get(a)!, proxies.get(b)!];
        await cluster.next(b, 'ready', 60_000);

        const dropAt = monotonicMillis();
        const silenced = proxyA.connections;
        proxyA.blackholeOpen({ passCloses: false });
        // A keeps the lock on a new connection, or demotes and B takes it over.
        await new Promise((resolve) => setTimeout(resolve, 2 * INTERVAL + 2_000));
        const bTookOver = cluster.terms().some((t) => t.name === b);

        const partitionAt = monotonicMillis();
        proxyB.blackhole({ passCloses: false });
        await waitUntil(
          async () => {
            const [sa, sb] = await Promise.all([cluster.status(a), cluster.status(b)]);
            return sa.role === 'master' && sa.lastError === undefined && sb.role !== 'master';
          },
          {
            timeout: BOUND,
            interval: 100,
            message: `A master again within ${BOUND} ms of B's partition (B took over: ${bTookOver})`,
          },
        );
        const masterAfter = monotonicMillis() - partitionAt;
        expect(overlaps(cluster.terms())).toEqual([]);
        // A holds the lock through a connection opened after the drop.
        expect(proxyA.connections).toBeGreaterThan(proxyA.silencedConnections);
        console.log(
          `[locker silent ${db} ${type}] ${silenced} connection(s) through A's proxy silenced; B took over: ` +
            `${bTookOver}; A master ${masterAfter} ms after B's partition (bound ${BOUND} ms), ` +
            `${Math.round(monotonicMillis() - dropAt)} ms after the drop`,
        );
      } finally {
        await cluster.closeAll();
        for (const proxy of proxies.values()) await proxy.stop();
        const dataSource = await createTestDataSource(db);
        await sqlClientFor(dataSource)
          .execute(statement(`DROP TABLE IF EXISTS ${tableName(prefix, lockTable())}`))
          .catch(() => undefined);
        await dataSource.destroy();
      }
    },
    120_000,
  );
});

const SCHEDULED_WORKER = join(__dirname, 'workers', 'scheduled-worker.ts');
/** A's ticks again once B is cut off: a statement bound (5 s by default), the next tick, 3 s. */
const SCHEDULED_BOUND = 5_000 + 1_000 + 3_000;

describe('a @ScheduledLock instance whose open connections go silent for good', () => {
  it.each(testServerDatabases())(
    '[%s] runs its job again on new connections once the other instance is cut off',
    async (db) => {
      const prefix = uniqueTablePrefix(`sls_${db}`);
      const proxies = [new TcpProxy(testServerPort(db)), new TcpProxy(testServerPort(db))];
      const [proxyA, proxyB] = proxies;
      const runs: { name: string; at: number }[] = [];
      const ready = new Set<string>();
      const children: ChildProcess[] = [];
      const spawn = (name: string, port: number): ChildProcess => {
        const config: ScheduledWorkerConfig = {
          name,
          db,
          port,
          prefix,
          lockName: 'silent-job',
          lockAtMostFor: 3_000,
          lockAtLeastFor: 500,
          jobMs: 50,
        };
        const child = forkTs(SCHEDULED_WORKER, [], {
          env: { ...process.env, HOLDFAST_SCHEDULED_WORKER: JSON.stringify(config) },
        });
        child.on('message', (m: ScheduledWorkerMessage) => {
          if (m.type === 'run') runs.push({ name: m.name, at: m.at });
          if (m.type === 'ready') ready.add(m.name);
        });
        children.push(child);
        return child;
      };
      try {
        await Promise.all(proxies.map((p) => p.start()));
        spawn('a', proxyA.port);
        spawn('b', proxyB.port);
        await waitUntil(() => ready.size === 2 && runs.some((r) => r.name === 'a'), {
          timeout: 60_000,
          message: 'both ready, and A to have run the job',
        });

        const silenced = proxyA.connections;
        proxyA.blackholeOpen({ passCloses: false });
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        const partitionAt = monotonicMillis();
        proxyB.blackhole({ passCloses: false });
        // A tick B started before its partition may hold the lock for lockAtMostFor.
        const after = partitionAt + 3_000;
        const run = await waitUntil(() => runs.find((r) => r.name === 'a' && r.at > after), {
          timeout: SCHEDULED_BOUND + 3_000,
          interval: 100,
          message: `A to run the job within ${SCHEDULED_BOUND} ms of B's lock lapsing`,
        });
        console.log(
          `[scheduled silent ${db}] ${silenced} connection(s) through A's proxy silenced; A ran the job ` +
            `${run.at - partitionAt} ms after B's partition`,
        );
        expect(proxyA.connections).toBeGreaterThan(proxyA.silencedConnections);
      } finally {
        for (const child of children) {
          child.kill('SIGKILL');
          await waitForExit(child).catch(() => undefined);
        }
        for (const proxy of proxies) await proxy.stop();
        const dataSource = await createTestDataSource(db);
        await sqlClientFor(dataSource)
          .execute(statement(`DROP TABLE IF EXISTS ${tableName(prefix, lockTable())}`))
          .catch(() => undefined);
        await dataSource.destroy();
      }
    },
    120_000,
  );
});
