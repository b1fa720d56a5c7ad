/**
 * Network partitions between locker instances and the database, made in the network: each of three
 * processes runs in a network namespace of its own and reaches the server through a veth pair
 * (and a TcpProxy on the host end); a partition takes the pair down, so packets are dropped
 * without a reset. Per locker that talks to a database (lease-database, database): the master is
 * cut off for longer than its lock can outlive it, then healed; a standby is cut off and healed;
 * the master is cut off for less than an interval and healed. Never two masters (terms from each
 * process's acquired/lost reports on the system-wide monotonic clock), a standby takes over
 * while the old master is still cut off, and one healthy master after the last heal.
 * Needs PostgreSQL or MariaDB (left out of a SQLite-only run by jest.config.js); soak.
 */
import { lockTable } from '@holdfast/locker';
import { monotonicMillis, sqlClientFor, tableName, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  TcpProxy,
  soakDatabase,
  testDatabases,
  tsRegisterPath,
  uniqueTablePrefix,
} from '@holdfast/testing';
import { LockerCluster, overlaps } from '../locker/cluster';
import { NetworkNamespace } from './support/network-namespace';
import { serverPort, serverUrlThrough } from './support/server-url';

const INTERVAL = 1_000;
const KEEP_ALIVE = 250;
const NAMES = ['a', 'b', 'c'];
/** Longer than any bound on a silent master's lock (the database locker's server-side idle timeout). */
const LONG_PARTITION_MS = 10_000;
const SHORT_PARTITION_MS = 600;
const STANDBY_PARTITION_MS = 5_000;
const SETTLE_MS = 3_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const servers = testDatabases().filter((db): db is 'postgres' | 'mariadb' => db !== 'sqlite');

describe('network partitions between locker instances and the database', () => {
  // The database locker's lock lives as long as its session, which each server ends its own way
  // (idle_in_transaction_session_timeout, wait_timeout): on both. The lease-database locker's
  // lease is a row and a time, the same on every server: on one (HOLDFAST_TEST_SOAK_ALL=1: both).
  const leaseServers = soakDatabase(['mariadb', 'postgres'] as const);
  const cases = [
    ...servers.filter((db) => leaseServers.includes(db)).map((db) => [db, 'lease-database'] as const),
    ...servers.map((db) => [db, 'database'] as const),
  ];

  it.each(cases)(
    '[%s] %s: the master, a standby, the master again cut off and healed; never two masters',
    async (db, type) => {
      const cluster = new LockerCluster();
      const namespaces = new Map<string, NetworkNamespace>();
      const proxies: TcpProxy[] = [];
      const events: string[] = [];
      const t0 = monotonicMillis();
      const note = (text: string) => events.push(`${((monotonicMillis() - t0) / 1000).toFixed(1)} s ${text}`);
      const slot = 8_000 + (process.pid % 1000) * 8 + (db === 'postgres' ? 0 : 4);
      const prefix = uniqueTablePrefix(`lkp_${db}`);
      try {
        for (const [i, name] of NAMES.entries()) {
          const ns = NetworkNamespace.create(`l${db[0]}${process.pid % 10000}${i}`, slot + i);
          namespaces.set(name, ns);
          const proxy = new TcpProxy(serverPort(db));
          proxies.push(proxy);
          const port = await proxy.start(0, ns.hostIp);
          cluster.spawn(
            { db, prefix, name, interval: INTERVAL, keepAlive: KEEP_ALIVE, locker: { type } },
            ns.forkOptions(tsRegisterPath()),
            serverUrlThrough(db, ns.hostIp, port),
          );
        }
        await Promise.all(NAMES.map((n) => cluster.next(n, 'ready', 60_000)));
        const first = await cluster.firstAcquired(NAMES, -Infinity, 60_000);
        note(`${first.name} is master`);
        await sleep(SETTLE_MS);

        // 1. The master, for longer than its lock can outlive it: a standby takes over meanwhile.
        const cutAt = monotonicMillis();
        namespaces.get(first.name)!.partition();
        note(`the master ${first.name} cut off`);
        const others = NAMES.filter((n) => n !== first.name);
        const next = await cluster.firstAcquired(others, cutAt, LONG_PARTITION_MS);
        note(`${next.name} is master, ${next.at - cutAt} ms after the cut`);
        const lost = await cluster.next(first.name, 'lost', 1_000, cutAt);
        note(`${first.name} demoted ${lost.at - cutAt} ms after the cut (${lost.reason})`);
        await sleep(Math.max(0, cutAt + LONG_PARTITION_MS - monotonicMillis()));
        namespaces.get(first.name)!.heal();
        note(`${first.name} healed`);
        await sleep(SETTLE_MS);

        // 2. A standby.
        const standby = NAMES.find((n) => n !== next.name)!;
        namespaces.get(standby)!.partition();
        note(`the standby ${standby} cut off`);
        await sleep(STANDBY_PARTITION_MS);
        namespaces.get(standby)!.heal();
        note(`${standby} healed`);
        await sleep(SETTLE_MS);

        // 3. The master, for less than an interval.
        namespaces.get(next.name)!.partition();
        note(`the master ${next.name} cut off briefly`);
        await sleep(SHORT_PARTITION_MS);
        namespaces.get(next.name)!.heal();
        const healedAt = monotonicMillis();
        note(`${next.name} healed`);

        // One healthy master again, with no manual step.
        let statuses: Awaited<ReturnType<LockerCluster['status']>>[] = [];
        const deadline = Date.now() + 60_000;
        for (;;) {
          statuses = await Promise.all(NAMES.map((n) => cluster.status(n)));
          const masters = statuses.filter((s) => s.role === 'master').length;
          if (masters === 1 && statuses.every((s) => s.lastError === undefined)) break;
          if (Date.now() > deadline)
            throw new Error(`not recovered: ${JSON.stringify(statuses)}\n${events.join('\n')}`);
          await sleep(100);
        }
        note(
          `one healthy master (${statuses.find((s) => s.role === 'master')!.name}) ${monotonicMillis() - healedAt} ms after the last heal`,
        );

        const terms = cluster.terms();
        console.log(
          [
            `[locker partition ${db} ${type}] interval ${INTERVAL} ms, keep-alive ${KEEP_ALIVE} ms`,
            ...events,
            `terms: ${[...terms]
              .sort((x, y) => x.from - y.from)
              .map((t) => `${t.name} ${t.to - t.from} ms`)
              .join(' → ')}`,
          ].join('\n'),
        );
        expect(overlaps(terms)).toEqual([]);
        expect(next.name).not.toBe(first.name);
        expect(lost.at).toBeLessThan(next.at);
      } finally {
        for (const ns of namespaces.values()) if (ns.isPartitioned) ns.heal();
        await cluster.closeAll();
        for (const proxy of proxies) await proxy.stop().catch(() => undefined);
        for (const ns of namespaces.values()) ns.destroy();
        const dataSource = await createTestDataSource(db);
        await sqlClientFor(dataSource)
          .execute(statement(`DROP TABLE IF EXISTS ${tableName(prefix, lockTable())}`))
          .catch(() => undefined);
        await dataSource.destroy();
      }
    },
    240_000,
  );
});
