/**
 * The inbox bench's measurements (accepts, bulk, delivery, latency, CPU per message) for Holdfast,
 * graphile-worker and pg-boss: what bench/inbox.bench.ts prints and bench/latency.bench.ts reuses.
 */
import 'reflect-metadata';
import { makeWorkerUtils, type WorkerUtils } from 'graphile-worker';
import { tempSqliteFile } from '@holdfast/testing';
import { MessageAcceptor } from '@holdfast/inbox';
import {
  dataSource,
  GW_SCHEMA,
  PG_URL,
  POOL,
  PREFIX,
  QUEUE,
  TYPE,
  BOSS_SCHEMA,
  wallNow,
  type Db,
} from './inbox-bench-setup';
import { concurrently, inboxApp, newBoss, runWorkers, type WorkerRun } from './inbox-bench-workers';

export { deliveryHooks, profileWorkersTo } from './inbox-bench-workers';

/**
 * ANALYZE each system's table after the accepts, before delivery (`--no-analyze`: not): the
 * planner then knows the backlog, as it does for a table that has lived longer than the
 * autovacuum's first pass. Without it, PostgreSQL plans the first claims of a table filled since
 * its last ANALYZE as if it were nearly empty.
 */
let ANALYZE = true;
/** `--no-analyze`: no ANALYZE before delivery. */
export function analyzeBeforeDelivery(on: boolean): void {
  ANALYZE = on;
}

/** How the paced accepts of a latency run went, to tell a delivery latency from a saturated feed. */
export interface Feed {
  /** Each accepting call's own duration, ms (it waits for a pool connection when the feed is saturated). */
  acceptMs: number[];
  /** Calls completed per second, from the first call to the last one's answer. */
  achieved: number;
}

/** Calls `send(i)` for i < n at `rate` per second (each call starts on schedule; not awaited in turn). */
export async function paced(n: number, rate: number, send: (i: number) => Promise<unknown>): Promise<Feed> {
  const gap = 1000 / rate;
  const start = performance.now();
  const inFlight: Promise<unknown>[] = [];
  const acceptMs: number[] = [];
  for (let i = 0; i < n; i++) {
    const due = start + i * gap;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const sent = performance.now();
    inFlight.push(send(i).then(() => acceptMs.push(performance.now() - sent)));
  }
  await Promise.all(inFlight);
  return { acceptMs, achieved: (n / (performance.now() - start)) * 1000 };
}

/**
 * The latency run of one system: `s.latency` messages sent by `send` at `s.rate` while
 * `s.workers` workers of `role` sit idle; accept-to-handled p50/p99 and what the feed did.
 */
export async function latencyRun(
  role: string,
  s: Sizes,
  env: Record<string, string>,
  send: (i: number) => Promise<unknown>,
): Promise<Pick<Figures, 'p50' | 'p99' | 'acceptP50' | 'achieved'>> {
  // --latency 0: no latency run (the latency bench measures delivery only).
  if (s.latency <= 0) return { p50: NaN, p99: NaN, acceptP50: NaN, achieved: NaN };
  let feed!: Feed;
  const run = await runWorkers(role, s.workers, s.latency, env, async () => {
    feed = await paced(s.latency, s.rate, send);
  });
  return {
    p50: percentile(run.latencies, 50),
    p99: percentile(run.latencies, 99),
    acceptP50: percentile(feed.acceptMs, 50),
    achieved: feed.achieved,
  };
}

export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export const timed = async (work: () => Promise<unknown>) => {
  const t = performance.now();
  await work();
  return performance.now() - t;
};

// ---- one system at a time ---------------------------------------------------------------------

export interface Figures {
  single: number;
  bulk: number;
  /** Delivery from 'go' to the last message handled, the workers' start-up included. */
  delivery: number;
  /** Delivery from the first message handled to the last. */
  steady: number;
  /** From 'go' to the first message handled, ms. */
  startup: number;
  p50: number;
  p99: number;
  /** The latency run's accepting calls: their own p50 (ms), and the rate they completed at. */
  acceptP50: number;
  achieved: number;
  /** Delivery: CPU time per message of the worker processes and of PostgreSQL, µs. */
  workerCpu: number;
  databaseCpu: number;
}

export interface Sizes {
  single: number;
  bulk: number;
  workers: number;
  latency: number;
  rate: number;
}

export const rate = (n: number, ms: number) => (n / ms) * 1000;
export const messages = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({ type: TYPE, payload: { i: from + i } }));

export async function benchInbox(db: Db, s: Sizes, batch: number): Promise<Figures> {
  const sqliteFile = db === 'sqlite' ? tempSqliteFile('inbox-bench') : undefined;
  const env: Record<string, string> = { HOLDFAST_INBOX_BENCH_BATCH: String(batch) };
  if (sqliteFile) env.HOLDFAST_INBOX_BENCH_SQLITE = sqliteFile;
  const ds = await dataSource(db, sqliteFile);
  const drop = async () => {
    await ds.query(`DROP TABLE IF EXISTS ${PREFIX}COR_MESSAGE`);
    await ds.query(`DROP TABLE IF EXISTS ${PREFIX}HOLDFAST_INBOX_GROUP`);
    await ds.query(`DROP TABLE IF EXISTS ${PREFIX}simba_mutex`);
  };
  await drop();
  try {
    const app = await inboxApp(db, ds, false);
    const acceptor = app.get(MessageAcceptor);
    await concurrently(200, 10, (i) => acceptor.accept({ type: TYPE, payload: { warm: i } }));
    const tSingle = await concurrently(s.single, 10, (i) => acceptor.accept({ type: TYPE, payload: { i } }));
    const batch = messages(0, s.bulk);
    const tBulk = await timed(() => acceptor.acceptAll(batch));
    const total = s.single + s.bulk + 200;
    if (ANALYZE && db === 'postgres') await ds.query(`ANALYZE ${PREFIX}COR_MESSAGE`);
    const delivery = await runWorkers(`inbox:${db}`, s.workers, total, env);
    const latency = await latencyRun(`inbox:${db}`, s, env, (i) =>
      acceptor.accept({ type: TYPE, payload: { t: wallNow(), i } }),
    );
    await app.close();
    return {
      single: rate(s.single, tSingle),
      bulk: rate(s.bulk, tBulk),
      ...deliveryRates(delivery, total),
      ...latency,
      ...cpuPerMessage(delivery, total, db),
    };
  } finally {
    await drop();
    await ds.destroy();
  }
}

/**
 * The four measures for a peer queue, the same way for each: 200 warm-up jobs, `s.single` single
 * sends at concurrency 10, one bulk insert of `s.bulk` (its jobs built before the clock starts), delivery of
 * everything by `s.workers` processes of `kind`, then paced latency.
 */
export async function measurePeer(
  s: Sizes,
  kind: 'graphile' | 'boss',
  send: (payload: Record<string, unknown>) => Promise<unknown>,
  prepareBulk: (count: number) => () => Promise<unknown>,
  analyze: () => Promise<unknown>,
): Promise<Figures> {
  await concurrently(200, 10, (i) => send({ warm: i }));
  const tSingle = await concurrently(s.single, 10, (i) => send({ i }));
  const insertBulk = prepareBulk(s.bulk);
  const tBulk = await timed(insertBulk);
  const total = s.single + s.bulk + 200;
  if (ANALYZE) await analyze();
  const delivery = await runWorkers(kind, s.workers, total);
  const latency = await latencyRun(kind, s, {}, (i) => send({ t: wallNow(), i }));
  return {
    single: rate(s.single, tSingle),
    bulk: rate(s.bulk, tBulk),
    ...deliveryRates(delivery, total),
    ...latency,
    ...cpuPerMessage(delivery, total, 'postgres'),
  };
}

/** Delivery from 'go' (the workers' start-up included), and from the first message handled on. */
export function deliveryRates(
  run: WorkerRun,
  total: number,
): Pick<Figures, 'delivery' | 'steady' | 'startup'> {
  return {
    delivery: rate(total, run.elapsed),
    steady: rate(total, run.elapsed - run.startup),
    startup: run.startup,
  };
}

/** The delivery's CPU time per message, µs (the database's only for PostgreSQL, a server here). */
export function cpuPerMessage(
  run: WorkerRun,
  total: number,
  db: Db,
): Pick<Figures, 'workerCpu' | 'databaseCpu'> {
  return {
    workerCpu: (run.workerCpuMs * 1000) / total,
    databaseCpu: db === 'postgres' ? (run.databaseCpuMs * 1000) / total : NaN,
  };
}

export async function benchGraphile(s: Sizes): Promise<Figures> {
  const ds = await dataSource('postgres');
  await ds.query(`DROP SCHEMA IF EXISTS ${GW_SCHEMA} CASCADE`);
  let utils: WorkerUtils | undefined;
  try {
    utils = await makeWorkerUtils({ connectionString: PG_URL, schema: GW_SCHEMA, maxPoolSize: POOL });
    await utils.migrate();
    const u = utils;
    return await measurePeer(
      s,
      'graphile',
      (payload) => u.addJob(QUEUE, payload),
      (n) => {
        const specs = Array.from({ length: n }, (_, i) => ({ identifier: QUEUE, payload: { i } }));
        return () => u.addJobs(specs);
      },
      () => ds.query(`ANALYZE ${GW_SCHEMA}._private_jobs`),
    );
  } finally {
    await utils?.release();
    await ds.query(`DROP SCHEMA IF EXISTS ${GW_SCHEMA} CASCADE`);
    await ds.destroy();
  }
}

export async function benchBoss(s: Sizes): Promise<Figures> {
  const ds = await dataSource('postgres');
  await ds.query(`DROP SCHEMA IF EXISTS ${BOSS_SCHEMA} CASCADE`);
  const boss = newBoss();
  boss.on('error', (e) => console.error('pg-boss:', e));
  try {
    await boss.start();
    await boss.createQueue(QUEUE);
    return await measurePeer(
      s,
      'boss',
      (payload) => boss.send(QUEUE, payload),
      (n) => {
        const jobs = Array.from({ length: n }, (_, i) => ({ name: QUEUE, data: { i } }));
        return () => boss.insert(jobs);
      },
      () => ds.query(`ANALYZE ${BOSS_SCHEMA}.job`),
    );
  } finally {
    await boss.stop({ graceful: false, wait: true }).catch(() => undefined);
    await ds.query(`DROP SCHEMA IF EXISTS ${BOSS_SCHEMA} CASCADE`);
    await ds.destroy();
  }
}
