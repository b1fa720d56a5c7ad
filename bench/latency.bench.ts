/**
 * npm run bench -- latency [--delays 0,1,5] [--rounds 1] [--databases postgres,mariadb]
 *                          [--single 1000] [--bulk 100000] [--batches 0] [--ops 20] [--profile DIR]
 *                          [--delivery 0]
 *
 * What a database 0.5–2 ms away costs: every connection goes through a TcpProxy that delays each
 * chunk by `--delays` ms each way (0, 1 and 5 by default) and counts the round trips (the
 * application sending again after the server's answer, on each connection).
 *  1. Round trips per operation, counted by the proxy (no delay needed: a count does not depend on
 *     it): an inbox claim of 100, a completion (delete of 100 delivered), a heartbeat (lease
 *     extension of 100), a Simba round (acquire/renew + read of one mutex), the failover call
 *     paths (a synchronous store write, a recovery read), and the lockers' operations (the database
 *     locker's acquire, standby attempt, keep-alive and release; the lease locker's; a
 *     @ScheduledLock tick that runs and one that finds the lock taken; bench/support/locker-operations.ts).
 *  2. At each delay: each of those operations one after the other (`--ops` times): ms per operation.
 *  3. At each delay: inbox delivery by 2 processes (bench/inbox.bench.ts's runs, with its accepts
 *     before; `--batches 0` is the inbox's default options) on PostgreSQL beside graphile-worker in
 *     its high-throughput setup, in the same run (interleaved, `--rounds`), and on MariaDB alone;
 *     with the round trips per message delivered the proxy counted during the delivery.
 *     101,200 messages by default (`--bulk 100000`): about 2 s of delivery at these rates, of
 *     which the workers' warm-up (their first 300–400 ms, JIT and pools, the same for both
 *     systems) is a small part; at `--bulk 20000` (the default before 2026-11-28) it was half
 *     the run, and the rates said more about start-up than about delivery.
 * `--delivery 0`: parts 1 and 2 only.
 * `--profile DIR`: CPU profiles of the Holdfast delivery workers (node --cpu-prof), one directory
 * per database and delay.
 */
import 'reflect-metadata';
import { join } from 'node:path';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { SchemaManager, sqlClientFor, statement } from '@holdfast/core/kit';
import { createTestDataSource, TcpProxy, uniqueTablePrefix, type TestDatabase } from '@holdfast/testing';
import { MutexQueryResolver } from '@holdfast/simba/internal';
import { Failover, FailoverModule } from '@holdfast/failover';
import { InboxModule, MessageAcceptor } from '@holdfast/inbox';
import { MutexRepository } from '../libs/simba/src/mutex/mutex.repository';
import { InboxConnection } from '../libs/inbox/src/store/inbox-connection';
import type { Lease } from '../libs/inbox/src/store/cor-message.rows';
import { median, numberArg, printTable } from './support/bench-kit';
import { lockerOperations } from './support/locker-operations';
import { SIMBA_TABLES } from '@holdfast/simba';

type ServerDb = Extract<TestDatabase, 'postgres' | 'mariadb'>;
const SERVERS: Record<ServerDb, { env: string; fallback: string }> = {
  postgres: { env: 'HOLDFAST_TEST_PG_URL', fallback: 'postgres://postgres@127.0.0.1:5432/test' },
  mariadb: { env: 'HOLDFAST_TEST_MARIADB_URL', fallback: 'mysql://root@127.0.0.1:3306/test' },
};
const BATCH = 100;

/** One operation measured alone: `run` does it once (after `prepare`, which is not counted). */
interface Operation {
  name: string;
  prepare?: () => Promise<void>;
  run: () => Promise<unknown>;
}

/** What each database's operations need, built once, through the proxy; `close` ends it all. */
interface Fixture {
  operations: Operation[];
  close: () => Promise<void>;
}

class Upstream {
  fail = false;
}

@Injectable()
class Quotes {
  constructor(private readonly upstream: Upstream) {}
  @Failover({ name: 'latency-quote', expiry: '1h' })
  async quote(key: string): Promise<{ key: string }> {
    if (this.upstream.fail) throw new Error('upstream down');
    return { key };
  }
}

async function fixture(db: ServerDb): Promise<Fixture> {
  const dataSource = await createTestDataSource(db, { poolSize: 10 });
  const sql = sqlClientFor(dataSource);
  const prefix = uniqueTablePrefix('lat');
  const closers: (() => Promise<unknown>)[] = [];

  // Inbox: a claim, a completion and a heartbeat of BATCH messages, through its own statements.
  const inbox = await Test.createTestingModule({
    imports: [InboxModule.forRoot({ dataSource, tablePrefix: prefix, schema: 'create', deliver: false })],
  }).compile();
  await inbox.init();
  closers.push(() => inbox.close());
  const acceptor = inbox.get(MessageAcceptor);
  const store = inbox.get(InboxConnection).store;
  const lease = 30_000;
  let claimed: Lease[] = [];
  // Each operation on a table of BATCH due messages: rows an earlier operation left leased would
  // make every later claim walk past them (the time would measure the table's history).
  const fill = async () => {
    await sql.execute(statement(`DELETE FROM ${prefix}COR_MESSAGE`));
    await acceptor.acceptAll(
      Array.from({ length: BATCH }, (_, i) => ({ type: { namespace: 'lat', name: 'm' }, payload: { i } })),
    );
  };
  const claim = async () => {
    const { rows } = await store.claims.claim(BATCH, undefined, lease);
    claimed = rows.map((r) => ({ id: r.id, until: r.nextRetry! }));
    return rows;
  };

  // Simba: one round of one mutex (acquire, then renewals), as the contend loop's tick runs it.
  await new SchemaManager(sql).apply(SIMBA_TABLES.mutex, prefix, 'create');
  const repository = new MutexRepository(sql, new MutexQueryResolver(sql.dialect, prefix), 2_000);
  let owns = false;
  const simbaRound = async () => {
    const { rows } = await repository.batch([
      {
        mutex: 'latency',
        contenderId: 'bench',
        attempt: 'acquire',
        renew: owns,
        ttl: 10_000,
        transition: 2_000,
      },
    ]);
    owns = rows.get('latency')?.ownerId === 'bench';
  };

  // Failover: a @Failover call with the SQL store written synchronously, and a recovery read.
  const failover = await Test.createTestingModule({
    imports: [
      FailoverModule.forRoot({
        store: { type: 'sql', dataSource, tablePrefix: prefix, schema: 'create' },
        async: false,
        cleanup: { enabled: false },
      }),
    ],
    providers: [Quotes, Upstream],
  }).compile();
  const app = await failover.createNestApplication({ logger: ['error'] }).init();
  closers.push(() => app.close());
  const quotes = app.get(Quotes);
  const upstream = app.get(Upstream);

  const lockers = await lockerOperations(dataSource, sql, prefix);
  closers.push(() => lockers.close());

  closers.push(async () => {
    for (const table of ['COR_MESSAGE', 'simba_mutex', 'FAILOVER_STORE', 'HOLDFAST_LOCK'])
      await sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}${table}`)).catch(() => undefined);
  });
  closers.push(() => dataSource.destroy());
  return {
    operations: [
      { name: `inbox claim of ${BATCH}`, prepare: async () => void (await fill()), run: claim },
      {
        name: `inbox heartbeat of ${BATCH}`,
        prepare: async () => void (await fill().then(claim)),
        run: () => store.completion.extendLeases(claimed, Date.now() + lease),
      },
      {
        name: `inbox completion of ${BATCH}`,
        prepare: async () => void (await fill().then(claim)),
        run: () => store.completion.deleteOwned(claimed),
      },
      { name: 'Simba round (1 mutex)', run: simbaRound },
      {
        name: 'failover call, store write',
        prepare: async () => void (upstream.fail = false),
        run: () => quotes.quote('k'),
      },
      {
        name: 'failover call, recovery read',
        prepare: async () => void (upstream.fail = true),
        run: () => quotes.quote('k'),
      },
      ...lockers.operations,
    ],
    close: async () => {
      for (const close of closers) await close();
    },
  };
}

const settle = () => new Promise((r) => setTimeout(r, 100));

/** Round trips one run of `op` costs (the proxy's count around it), the median of `times` runs. */
async function countTrips(proxy: TcpProxy, op: Operation, times: number): Promise<number> {
  const counts: number[] = [];
  for (let i = 0; i < times; i++) {
    await op.prepare?.();
    await settle(); // the preparation's own tail (a claim's session reset) is not counted
    proxy.resetRoundTrips();
    await op.run();
    // What an operation sends after its caller has the answer (a session reset before the
    // connection goes back to the pool) is its cost too: let it reach the proxy.
    await settle();
    counts.push(proxy.roundTrips);
  }
  return median(counts);
}

/** Milliseconds per run of `op`, run `times` times one after the other (preparation not timed). */
async function timeOp(op: Operation, times: number): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    await op.prepare?.();
    const t = performance.now();
    await op.run();
    ms.push(performance.now() - t);
  }
  return median(ms);
}

function list(args: string[], name: string, fallback: string): string[] {
  const i = args.indexOf(`--${name}`);
  return (i >= 0 ? args[i + 1] : fallback).split(',').map((s) => s.trim());
}

export async function main(args: string[]): Promise<void> {
  const delays = list(args, 'delays', '0,1,5').map(Number);
  const databases = list(args, 'databases', 'postgres,mariadb') as ServerDb[];
  const rounds = numberArg(args, '--rounds', 1);
  const ops = numberArg(args, '--ops', 20);
  const batches = list(args, 'batches', '0').map(Number);
  const p = args.indexOf('--profile');
  const profileDir = p >= 0 ? args[p + 1] : undefined;

  // Every connection of this process and of the workers it forks goes through a proxy.
  const proxies = new Map<ServerDb, TcpProxy>();
  for (const db of databases) {
    const url = new URL(process.env[SERVERS[db].env] ?? SERVERS[db].fallback);
    const proxy = new TcpProxy(Number(url.port || (db === 'postgres' ? 5432 : 3306)), url.hostname);
    url.port = String(await proxy.start());
    url.hostname = '127.0.0.1';
    process.env[SERVERS[db].env] = url.toString();
    proxies.set(db, proxy);
  }
  // Read after the URLs above are set: its PG_URL and MARIADB_URL are taken at load.
  const inboxBench = await import('./support/inbox-bench-runs');

  try {
    // 1 and 2: each operation alone.
    const tripRows: (string | number)[][] = [];
    const timeRows: (string | number)[][] = [];
    for (const db of databases) {
      const proxy = proxies.get(db)!;
      proxy.delay(0);
      const f = await fixture(db);
      try {
        for (const op of f.operations) {
          await op.prepare?.();
          await op.run(); // warm: connections open, statements planned
          tripRows.push([db, op.name, await countTrips(proxy, op, 5)]);
        }
        for (const delay of delays) {
          proxy.delay(delay);
          for (const op of f.operations)
            timeRows.push([db, op.name, delay, await timeOp(op, delay > 0 ? ops : ops * 5)]);
        }
      } finally {
        proxy.delay(0);
        await f.close();
      }
    }
    printTable(
      'Round trips per operation (counted by the proxy, median of 5)',
      ['database', 'operation', 'round trips'],
      tripRows,
    );
    printTable(
      'Each operation alone, one after the other, through the delaying proxy (ms, median)',
      ['database', 'operation', 'delay each way (ms)', 'ms per operation'],
      timeRows,
    );

    if (numberArg(args, '--delivery', 1) === 0) return;
    // 3: delivery.
    const sizes: import('./support/inbox-bench-runs').Sizes = {
      single: numberArg(args, '--single', 1_000),
      bulk: numberArg(args, '--bulk', 100_000),
      workers: 2,
      latency: 0,
      rate: 500,
    };
    const total = sizes.single + sizes.bulk + 200;
    const dbOf = (name: string): ServerDb => (name.includes('MariaDB') ? 'mariadb' : 'postgres');
    const label = (b: number) => (b > 0 ? `batchSize ${b}` : 'defaults');
    const deliveryRows: (string | number)[][] = [];
    for (const delay of delays) {
      for (const proxy of proxies.values()) proxy.delay(delay);
      const figures = new Map<
        string,
        { rate: number[]; trips: number[]; workerCpu: number[]; dbCpu: number[] }
      >();
      const measure = async (
        name: string,
        db: ServerDb,
        run: () => Promise<{ steady: number; workerCpu: number; databaseCpu: number }>,
      ) => {
        const proxy = proxies.get(db)!;
        let trips = 0;
        inboxBench.deliveryHooks.before = () => proxy.resetRoundTrips();
        inboxBench.deliveryHooks.after = () => (trips = proxy.roundTrips);
        const f = await run();
        const entry = figures.get(name) ?? { rate: [], trips: [], workerCpu: [], dbCpu: [] };
        entry.rate.push(f.steady);
        entry.trips.push(trips / total);
        entry.workerCpu.push(f.workerCpu);
        entry.dbCpu.push(f.databaseCpu);
        figures.set(name, entry);
        return f.steady;
      };
      const ratios = new Map<string, number[]>();
      for (let round = 0; round < rounds; round++) {
        if (databases.includes('postgres')) {
          const gw = await measure('graphile-worker', 'postgres', () => inboxBench.benchGraphile(sizes));
          for (const batch of batches) {
            inboxBench.profileWorkersTo(
              profileDir && join(profileDir, `postgres-${delay}ms-${label(batch)}`),
            );
            const name = `Holdfast PostgreSQL, ${label(batch)}`;
            const hf = await measure(name, 'postgres', () => inboxBench.benchInbox('postgres', sizes, batch));
            ratios.set(name, [...(ratios.get(name) ?? []), hf / gw]);
          }
        }
        if (databases.includes('mariadb') && round === 0) {
          inboxBench.profileWorkersTo(profileDir && join(profileDir, `mariadb-${delay}ms`));
          await measure(`Holdfast MariaDB, ${label(batches[0])}`, 'mariadb', () =>
            inboxBench.benchInbox('mariadb', sizes, batches[0]),
          );
        }
      }
      for (const [name, f] of figures) {
        const r = ratios.get(name);
        deliveryRows.push([
          delay,
          name,
          median(f.rate),
          median(f.trips).toFixed(3),
          median(f.workerCpu).toFixed(0),
          dbOf(name) === 'postgres' ? median(f.dbCpu).toFixed(0) : '–',
          r ? `${median(r).toFixed(2)} (${Math.min(...r).toFixed(2)}–${Math.max(...r).toFixed(2)})` : '–',
        ]);
      }
    }
    printTable(
      `Delivery by 2 processes of ${total} messages (from the first message handled), through the proxy`,
      [
        'delay each way (ms)',
        'system',
        'msg/s',
        'round trips per message',
        'CPU per message, workers (µs)',
        'CPU per message, PostgreSQL (µs)',
        '÷ graphile-worker, median (range)',
      ],
      deliveryRows,
    );
  } finally {
    for (const proxy of proxies.values()) await proxy.stop();
  }
}
