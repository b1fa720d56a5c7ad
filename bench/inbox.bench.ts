/**
 * npm run bench -- inbox [--single N] [--bulk N] [--workers 2] [--latency N] [--rate 500] [--rounds N]
 *                        [--databases postgres,mariadb,sqlite] [--profile DIR] [--no-analyze]
 *                        [--batches 100,500]
 *
 * @holdfast/inbox against graphile-worker 0.17 and pg-boss 10 on the same PostgreSQL, in the same
 * run (ratios against graphile-worker), then Holdfast alone on MariaDB and SQLite:
 *  1. accept ×1 at concurrency 10: `MessageAcceptor.accept` / `addJob` / `boss.send`;
 *  2. bulk: `acceptAll` / `addJobs` / `boss.insert` (the whole list in one call each);
 *  3. delivery: 2 worker processes each, no-op handler, until everything accepted above is
 *     processed: the inbox's own loop / graphile-worker's runner / a tight pg-boss
 *     `fetch(100)` + `complete(ids)` loop;
 *  4. latency: `--latency` messages accepted one by one at `--rate` per second while the 2
 *     workers sit idle; accept-to-handled time (the accepting call's start to the handler's start,
 *     one machine, one wall clock) p50/p99. Beside them, what the feed did: the accepting call's
 *     own p50 and the rate the accepts completed at; below 95% of `--rate` the machine could not
 *     take the rate (the accepts queued for connections), and the bench says so.
 *  5. the delivery's CPU time per message: the worker processes' own (`process.cpuUsage`, from
 *     'go', start-up included) and PostgreSQL's (every server process, from /proc). Less noisy
 *     than the rates on a shared machine, and it says which side a change moved.
 * Holdfast runs once per `--batches` size on PostgreSQL (its batchSize, and completionBatchSize
 * the same: 100, the defaults, and 500, what graphile-worker's local queue below fetches at
 * once), with the first size elsewhere.
 * graphile-worker runs in its documented high-throughput setup: concurrentJobs 10 per process,
 * localQueue.size 500, completeJobBatchDelay 0 and failJobBatchDelay 0 (batched completion),
 * maxPoolSize 12, its LISTEN/NOTIFY on (the default), prepared statements (the default).
 * Each system gets its own schema or table, dropped afterwards.
 * `--rounds N` runs the PostgreSQL comparison N times, the systems taking turns, and ends with
 * each ratio's median over the rounds (every ratio taken within its own round): one round's
 * latency moves ±30% on a shared machine.
 */
import 'reflect-metadata';
import type { ChildProcess } from 'node:child_process';
import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource, type DataSourceOptions } from 'typeorm';
import PgBoss from 'pg-boss';
import { makeWorkerUtils, type WorkerUtils } from 'graphile-worker';
import { forkTs, tempSqliteFile, waitForExit, waitForMessage, waitUntil } from '@holdfast/testing';
import { InboxHandler, InboxModule, MessageAcceptor, type InboxMessage } from '@holdfast/inbox';
import { InboxNotifyListener } from '@holdfast/inbox/internal';
import { SimbaModule } from '@holdfast/simba';
import { postgresCpuMs } from './support/bench-kit';
import { GRAPHILE_SETTINGS, runGraphile } from './support/graphile';

type Db = 'postgres' | 'mariadb' | 'sqlite';
const PG_URL = process.env.HOLDFAST_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MARIADB_URL = process.env.HOLDFAST_TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test';
const PREFIX = 'hf_bench_inbox_';
const BOSS_SCHEMA = 'pgboss_bench';
const GW_SCHEMA = 'graphile_worker_bench';
const QUEUE = 'bench';
const TYPE = { namespace: 'bench', name: 'item' };
const POOL = 10;
let PROFILE_DIR: string | undefined;
/** CPU profiles of the Holdfast workers go to `dir` (node --cpu-prof); the latency bench sets it. */
export function profileWorkersTo(dir: string | undefined): void {
  PROFILE_DIR = dir;
}
/**
 * ANALYZE each system's table after the accepts, before delivery (`--no-analyze`: not): the
 * planner then knows the backlog, as it does for a table that has lived longer than the
 * autovacuum's first pass. Without it, PostgreSQL plans the first claims of a table filled since
 * its last ANALYZE as if it were nearly empty.
 */
let ANALYZE = true;

function arg(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

function dataSourceOptions(db: Db, sqliteFile?: string): DataSourceOptions {
  if (db === 'postgres') return { type: 'postgres', url: PG_URL, poolSize: POOL, extra: { max: POOL } };
  if (db === 'mariadb')
    return {
      type: 'mariadb',
      url: MARIADB_URL,
      timezone: 'Z',
      poolSize: POOL,
      extra: { connectionLimit: POOL },
    } as DataSourceOptions;
  return {
    type: 'better-sqlite3',
    database: sqliteFile!,
    enableWAL: true,
    timeout: 5_000,
  } as DataSourceOptions;
}

async function dataSource(db: Db, sqliteFile?: string): Promise<DataSource> {
  return new DataSource(dataSourceOptions(db, sqliteFile)).initialize();
}

const GROUPS = Number(process.env.HOLDFAST_INBOX_BENCH_GROUPS ?? 0);
/** Holdfast's batchSize in a worker process (the main process passes it on, see `--batches`). */
const BATCH = Number(process.env.HOLDFAST_INBOX_BENCH_BATCH ?? 100);
function idHash(id: string): number {
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) >>> 0;
  return h;
}

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes. */
const wallNow = () => performance.timeOrigin + performance.now();

/** What a worker saw: how many it handled, and the accept-to-handled latency of those with a `t`. */
class Tally {
  n = 0;
  latencies: number[] = [];
  /** Wall-clock times at which the first and the last message were handled. */
  first = NaN;
  last = NaN;
  saw(payload: unknown): void {
    this.n++;
    this.last = wallNow();
    if (this.n === 1) this.first = this.last;
    const t = (payload as { t?: number } | null)?.t;
    if (typeof t === 'number') this.latencies.push(wallNow() - t);
  }
}

@Injectable()
class NoopHandler {
  static tally = new Tally();
  @InboxHandler(TYPE)
  async handle(message: InboxMessage): Promise<void> {
    NoopHandler.tally.saw(message.payload);
  }
}

async function inboxApp(db: Db, ds: DataSource, deliver: boolean): Promise<INestApplicationContext> {
  const leader = db === 'sqlite';
  @Module({
    imports: [
      InboxModule.forRoot({
        dataSource: ds,
        tablePrefix: PREFIX,
        schema: 'create',
        deliver,
        cluster: leader ? 'leader' : 'competing',
        // BATCH 0: the inbox's defaults throughout (batch sizes, poll interval).
        ...(BATCH > 0
          ? {
              batchSize: BATCH,
              // Deletes of delivered messages in batches of a claim's size (100 is the default for both).
              completionBatchSize: BATCH,
              pollInterval: '50ms',
            }
          : {}),
        // HOLDFAST_INBOX_BENCH_NOTIFY=false: what LISTEN/NOTIFY costs and brings (PostgreSQL).
        ...(process.env.HOLDFAST_INBOX_BENCH_NOTIFY === 'false' ? { notify: false } : {}),
        // HOLDFAST_INBOX_BENCH_GROUPS=N: strict order per group over N groups (by message id).
        ...(GROUPS > 0 ? { groupBy: (m: InboxMessage) => `g${idHash(m.id) % GROUPS}` } : {}),
      }),
      ...(leader ? [SimbaModule.forRoot({ dataSource: ds, tablePrefix: PREFIX, schema: 'create' })] : []),
    ],
    providers: [NoopHandler],
  })
  class BenchModule {}
  return NestFactory.createApplicationContext(BenchModule, { logger: ['error', 'warn'] });
}

function newBoss(): PgBoss {
  return new PgBoss({
    connectionString: PG_URL,
    schema: BOSS_SCHEMA,
    max: POOL,
    supervise: false,
    schedule: false,
  });
}

async function concurrently(
  total: number,
  concurrency: number,
  fn: (i: number) => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await fn(next++);
    }),
  );
  return performance.now() - started;
}

// ---- worker processes -------------------------------------------------------------------------
// Each: starts, says 'ready' (once able to deliver at once: the inbox's listener hears), waits for
// 'go', delivers and reports its tally every 100 ms, and on 'stop' reports its latencies and ends.

function reportLoop(tally: Tally, stop: () => Promise<void>): void {
  const cpuAtGo = process.cpuUsage();
  const report = setInterval(() => process.send!({ t: 'count', n: tally.n }), 100);
  process.on('message', (m: { t: string }) => {
    if (m.t !== 'stop') return;
    clearInterval(report);
    const cpu = process.cpuUsage(cpuAtGo);
    process.send!({
      t: 'latencies',
      latencies: tally.latencies,
      cpuMs: (cpu.user + cpu.system) / 1000,
      first: tally.first,
      last: tally.last,
    });
    void stop().finally(() => process.exit(0));
  });
}

const waitForGo = () =>
  new Promise<void>((resolve) => process.once('message', (m: { t: string }) => m.t === 'go' && resolve()));

async function inboxWorker(db: Db): Promise<void> {
  const ds = await dataSource(db, process.env.HOLDFAST_INBOX_BENCH_SQLITE);
  const idle = process.env.HOLDFAST_INBOX_BENCH_IDLE === '1';
  if (idle) {
    // Latency: delivering from the start, ready once the LISTEN connection hears (PostgreSQL).
    const app = await inboxApp(db, ds, true);
    if (db === 'postgres' && process.env.HOLDFAST_INBOX_BENCH_NOTIFY !== 'false') {
      const listener = app.get(InboxNotifyListener);
      await waitUntil(() => listener.listening, { timeout: 20_000, message: 'the LISTEN connection' });
    }
    process.send!({ t: 'ready' });
    await waitForGo();
    reportLoop(NoopHandler.tally, () => app.close().then(() => ds.destroy()));
    return;
  }
  process.send!({ t: 'ready' });
  await waitForGo();
  const app = await inboxApp(db, ds, true);
  reportLoop(NoopHandler.tally, () => app.close().then(() => ds.destroy()));
}

async function graphileWorker(): Promise<void> {
  const tally = new Tally();
  const start = () => runGraphile(PG_URL, GW_SCHEMA, QUEUE, async (payload) => tally.saw(payload));
  const idle = process.env.HOLDFAST_INBOX_BENCH_IDLE === '1';
  const runner = idle ? await start() : undefined;
  process.send!({ t: 'ready' });
  await waitForGo();
  const live = runner ?? (await start());
  reportLoop(tally, () => live.stop());
}

async function bossWorker(): Promise<void> {
  const boss = newBoss();
  await boss.start();
  process.send!({ t: 'ready' });
  await waitForGo();
  const tally = new Tally();
  let stop = false;
  reportLoop(tally, async () => {
    stop = true;
    await boss.stop({ graceful: false, wait: false });
  });
  while (!stop) {
    const jobs = await boss.fetch<{ t?: number }>(QUEUE, { batchSize: 100 });
    if (!jobs.length) {
      await new Promise((r) => setTimeout(r, 50));
      continue;
    }
    for (const job of jobs) tally.saw(job.data);
    await boss.complete(
      QUEUE,
      jobs.map((j) => j.id),
    );
  }
}

interface WorkerRun {
  /** From 'go' to the last message handled (ms): the workers' start-up included. */
  elapsed: number;
  /** From 'go' to the first message handled (ms): the workers' start-up. */
  startup: number;
  latencies: number[];
  /** CPU time the workers used from 'go' to 'stop' (user + system), ms. */
  workerCpuMs: number;
  /** CPU time of every PostgreSQL server process from 'go' until all was handled, ms (Linux). */
  databaseCpuMs: number;
}

/** Called around each delivery run (not the latency run): the latency bench counts round trips. */
export const deliveryHooks: { before?: () => void; after?: () => void } = {};

/**
 * Starts `n` workers of a kind, releases them together, and times them through `total` messages;
 * with `feed`, the workers are started idle and `feed` runs after the release (the latency run).
 */
async function runWorkers(
  role: string,
  n: number,
  total: number,
  env: Record<string, string> = {},
  feed?: () => Promise<unknown>,
): Promise<WorkerRun> {
  const children: ChildProcess[] = Array.from({ length: n }, () =>
    forkTs(__filename, [], {
      // --profile DIR: a CPU profile of each Holdfast worker (node --cpu-prof), written at its exit.
      execArgv: PROFILE_DIR && role.startsWith('inbox:') ? ['--cpu-prof', '--cpu-prof-dir', PROFILE_DIR] : [],
      env: {
        ...process.env,
        ...env,
        HOLDFAST_INBOX_BENCH_ROLE: role,
        HOLDFAST_INBOX_BENCH_IDLE: feed ? '1' : '0',
      },
    }),
  );
  await Promise.all(children.map((c) => waitForMessage(c, (m: { t: string }) => m.t === 'ready', 60_000)));
  const counts = new Map<ChildProcess, number>();
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  const latencies: number[] = [];
  let workerCpuMs = 0;
  let first = Infinity;
  let last = -Infinity;
  for (const c of children) {
    c.on(
      'message',
      (m: {
        t: string;
        n: number;
        latencies: number[];
        cpuMs: number;
        first: number | null;
        last: number | null;
      }) => {
        if (m.t === 'latencies') {
          latencies.push(...m.latencies);
          workerCpuMs += m.cpuMs;
          // null from a worker that handled nothing (NaN does not survive the IPC's JSON).
          if (typeof m.first === 'number' && m.first < first) first = m.first;
          if (typeof m.last === 'number' && m.last > last) last = m.last;
        }
        if (m.t !== 'count') return;
        counts.set(c, m.n);
        if ([...counts.values()].reduce((a, b) => a + b, 0) >= total) finish();
      },
    );
  }
  const databaseCpuAtGo = postgresCpuMs();
  if (!feed) deliveryHooks.before?.();
  const started = wallNow();
  for (const c of children) c.send({ t: 'go' });
  if (feed) await feed();
  await finished;
  // The workers report their counts every 100 ms; the handlers' own times say when it ended.
  const reportedAt = wallNow();
  if (!feed) deliveryHooks.after?.();
  const databaseCpuMs = postgresCpuMs() - databaseCpuAtGo;
  const reported = Promise.all(
    children.map((c) => waitForMessage(c, (m: { t: string }) => m.t === 'latencies', 15_000)),
  );
  for (const c of children) c.send({ t: 'stop' });
  await reported;
  await Promise.all(children.map((c) => waitForExit(c, 15_000)));
  const elapsed = (Number.isFinite(last) ? last : reportedAt) - started;
  return { elapsed, startup: first - started, latencies, workerCpuMs, databaseCpuMs };
}

/** How the paced accepts of a latency run went, to tell a delivery latency from a saturated feed. */
interface Feed {
  /** Each accepting call's own duration, ms (it waits for a pool connection when the feed is saturated). */
  acceptMs: number[];
  /** Calls completed per second, from the first call to the last one's answer. */
  achieved: number;
}

/** Calls `send(i)` for i < n at `rate` per second (each call starts on schedule; not awaited in turn). */
async function paced(n: number, rate: number, send: (i: number) => Promise<unknown>): Promise<Feed> {
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
async function latencyRun(
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

function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const timed = async (work: () => Promise<unknown>) => {
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

const rate = (n: number, ms: number) => (n / ms) * 1000;
const messages = (from: number, n: number) =>
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
async function measurePeer(
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
function deliveryRates(run: WorkerRun, total: number): Pick<Figures, 'delivery' | 'steady' | 'startup'> {
  return {
    delivery: rate(total, run.elapsed),
    steady: rate(total, run.elapsed - run.startup),
    startup: run.startup,
  };
}

/** The delivery's CPU time per message, µs (the database's only for PostgreSQL, a server here). */
function cpuPerMessage(run: WorkerRun, total: number, db: Db): Pick<Figures, 'workerCpu' | 'databaseCpu'> {
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

async function benchBoss(s: Sizes): Promise<Figures> {
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

// ---- main -------------------------------------------------------------------------------------

type RowKind = 'rate' | 'cost' | 'info';

// 'rate': higher is better; 'cost': lower is better (a latency, CPU per message); 'info': no ratio (what the latency run's feed did).
const ROWS: [string, (f: Figures) => number, RowKind][] = [
  ['accept ×1, concurrency 10 (msg/s)', (f) => f.single, 'rate'],
  ['bulk accept (msg/s)', (f) => f.bulk, 'rate'],
  ['delivery, 2 processes, start-up included (msg/s)', (f) => f.delivery, 'rate'],
  ['delivery, from the first message handled (msg/s)', (f) => f.steady, 'rate'],
  ["delivery: 'go' to the first message handled (ms)", (f) => f.startup, 'cost'],
  ['latency p50 (ms)', (f) => f.p50, 'cost'],
  ['latency p99 (ms)', (f) => f.p99, 'cost'],
  ['latency run: the accepting call alone, p50 (ms)', (f) => f.acceptP50, 'info'],
  ['latency run: accepts completed (msg/s)', (f) => f.achieved, 'info'],
  ['delivery CPU per message, workers (µs)', (f) => f.workerCpu, 'cost'],
  ['delivery CPU per message, PostgreSQL (µs)', (f) => f.databaseCpu, 'cost'],
];

/** Above 1.00 is better: rates ours ÷ theirs, latencies and costs theirs ÷ ours. */
function ratio(kind: RowKind, f: Figures, baseline: Figures, pick: (f: Figures) => number): number {
  return kind === 'rate' ? pick(f) / pick(baseline) : pick(baseline) / pick(f);
}

/** Each ratio's median over the rounds (each round's ratio taken within that round), and its range. */
function medianRatios(rounds: [string, Figures][][]): void {
  const names = rounds[0].slice(1).map(([name]) => name);
  console.log(
    `\nPostgreSQL, ${rounds.length} rounds: each ratio ÷ graphile-worker of its own round, median (min–max)\n`,
  );
  console.log(`| measure | ${names.map((n) => `${n} ÷ gw`).join(' | ')} |`);
  console.log(`|---|${names.map(() => '---').join('|')}|`);
  for (const [label, pick, kind] of ROWS) {
    if (kind === 'info') continue;
    const cells = names.map((_, c) => {
      const r = rounds
        .map((columns) => ratio(kind, columns[c + 1][1], columns[0][1], pick))
        .sort((a, b) => a - b);
      return `${percentile(r, 50).toFixed(2)} (${r[0].toFixed(2)}–${r[r.length - 1].toFixed(2)})`;
    });
    console.log(`| ${label} | ${cells.join(' | ')} |`);
  }
}

function table(title: string, rateAsked: number, columns: [string, Figures][], baseline?: Figures): void {
  console.log(`\n${title}\n`);
  const head = ['measure', ...columns.map(([name]) => name)];
  if (baseline) head.push(...columns.slice(1).map(([name]) => `${name} ÷ gw`));
  console.log(`| ${head.join(' | ')} |`);
  console.log(`|${head.map(() => '---').join('|')}|`);
  for (const [label, pick, kind] of ROWS) {
    // Rates in whole messages per second, times and CPU to a tenth.
    const cells = columns.map(([, f]) => pick(f).toFixed(label.endsWith('(msg/s)') ? 0 : 1));
    if (baseline) {
      for (const [, f] of columns.slice(1))
        cells.push(kind === 'info' ? '–' : ratio(kind, f, baseline, pick).toFixed(2));
    }
    console.log(`| ${label} | ${cells.join(' | ')} |`);
  }
  // Accept-to-handled starts before the accepting call: when the calls could not keep the rate,
  // they queued for connections and the figure is mostly that queue, not delivery.
  for (const [name, f] of columns)
    if (f.achieved < 0.95 * rateAsked)
      console.log(
        `${name}: its accepts completed at ${f.achieved.toFixed(0)} msg/s of the ${rateAsked} asked (the accepting ` +
          `call alone: p50 ${f.acceptP50.toFixed(1)} ms): its latency measures a saturated machine; try a lower --rate`,
      );
}

export async function main(args: string[]): Promise<void> {
  const sizes: Sizes = {
    single: arg(args, 'single', 5_000),
    bulk: arg(args, 'bulk', 50_000),
    workers: arg(args, 'workers', 2),
    latency: arg(args, 'latency', 2_500),
    rate: arg(args, 'rate', 500),
  };
  const roundCount = arg(args, 'rounds', 1);
  ANALYZE = !args.includes('--no-analyze');
  const p = args.indexOf('--profile');
  if (p >= 0) PROFILE_DIR = args[p + 1];
  const i = args.indexOf('--databases');
  const databases = (i >= 0 ? args[i + 1] : 'postgres,mariadb,sqlite').split(',') as Db[];
  console.log(
    `sizes: accept ×1 ${sizes.single}, bulk ${sizes.bulk}, delivery of all ${sizes.single + sizes.bulk + 200} ` +
      `by ${sizes.workers} processes, latency ${sizes.latency} messages at ${sizes.rate}/s`,
  );
  console.log(`graphile-worker settings (per process): ${JSON.stringify(GRAPHILE_SETTINGS)}`);
  console.log('pg-boss: fetch(batchSize 100) + complete(ids) loop, 50 ms sleep when empty');
  const notify = process.env.HOLDFAST_INBOX_BENCH_NOTIFY === 'false' ? 'off' : 'on (PostgreSQL)';
  const b = args.indexOf('--batches');
  const batches = (b >= 0 ? args[b + 1] : '100,500').split(',').map(Number);
  console.log(
    `Holdfast: batchSize ${batches.join(' and ')}, pollInterval 50ms, notify ${notify}, wakeOnAccept`,
  );
  console.log(
    ANALYZE
      ? 'PostgreSQL tables ANALYZEd after the accepts, before delivery (--no-analyze: not)'
      : 'no ANALYZE before delivery',
  );
  if (databases.includes('postgres') && process.env.HOLDFAST_INBOX_BENCH_ALONE === '1') {
    // HOLDFAST_INBOX_BENCH_ALONE=1: Holdfast alone on PostgreSQL too (before/after comparisons).
    const columns: [string, Figures][] = [];
    for (const batch of batches)
      columns.push([`Holdfast ${batch}`, await benchInbox('postgres', sizes, batch)]);
    table('postgres: Holdfast alone', sizes.rate, columns);
  } else if (databases.includes('postgres')) {
    // Rounds interleave the systems (graphile-worker, Holdfast, graphile-worker, …) so that a
    // machine that slows down mid-run weighs on both; pg-boss, far behind, runs in round 1 only.
    const rounds: [string, Figures][][] = [];
    for (let round = 1; round <= roundCount; round++) {
      const gw = await benchGraphile(sizes);
      const hf: [string, Figures][] = [];
      for (const batch of batches) hf.push([`Holdfast ${batch}`, await benchInbox('postgres', sizes, batch)]);
      const columns: [string, Figures][] = [['graphile-worker', gw], ...hf];
      if (round === 1) columns.push(['pg-boss', await benchBoss(sizes)]);
      const of = roundCount > 1 ? `, round ${round} of ${roundCount}` : '';
      table(
        `PostgreSQL, same run${of} (ratios ÷ graphile-worker, > 1.00 is better)`,
        sizes.rate,
        columns,
        gw,
      );
      rounds.push(columns.slice(0, 1 + batches.length));
    }
    if (roundCount > 1) medianRatios(rounds);
  }
  for (const db of databases.filter((d) => d !== 'postgres')) {
    table(`${db}: Holdfast alone`, sizes.rate, [
      [`Holdfast ${batches[0]}`, await benchInbox(db, sizes, batches[0])],
    ]);
  }
}

const role = process.env.HOLDFAST_INBOX_BENCH_ROLE;
if (role?.startsWith('inbox:')) void inboxWorker(role.slice('inbox:'.length) as Db);
if (role === 'graphile') void graphileWorker();
if (role === 'boss') void bossWorker();
