/**
 * The inbox bench's worker processes (Holdfast's inbox, graphile-worker, pg-boss), forked from
 * this file (HOLDFAST_INBOX_BENCH_ROLE), and `runWorkers`, which starts them and times them.
 */
import 'reflect-metadata';
import type { ChildProcess } from 'node:child_process';
import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import PgBoss from 'pg-boss';
import {} from 'graphile-worker';
import { forkTs, waitForExit, waitForMessage, waitUntil } from '@holdfast/testing';
import { InboxHandler, InboxModule, type InboxMessage } from '@holdfast/inbox';
import { InboxNotifyListener } from '@holdfast/inbox/internal';
import { SimbaModule } from '@holdfast/simba';
import { postgresCpuMs } from './bench-kit';
import { runGraphile } from './graphile';
import {
  BATCH,
  dataSource,
  GROUPS,
  GW_SCHEMA,
  idHash,
  PG_URL,
  POOL,
  PREFIX,
  QUEUE,
  TYPE,
  BOSS_SCHEMA,
  wallNow,
  type Db,
} from './inbox-bench-setup';

export let PROFILE_DIR: string | undefined;
/** CPU profiles of the Holdfast workers go to `dir` (node --cpu-prof); the latency bench sets it. */
export function profileWorkersTo(dir: string | undefined): void {
  PROFILE_DIR = dir;
}

/** What a worker saw: how many it handled, and the accept-to-handled latency of those with a `t`. */
export class Tally {
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
export class NoopHandler {
  static tally = new Tally();
  @InboxHandler(TYPE)
  async handle(message: InboxMessage): Promise<void> {
    NoopHandler.tally.saw(message.payload);
  }
}

export async function inboxApp(db: Db, ds: DataSource, deliver: boolean): Promise<INestApplicationContext> {
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

export function newBoss(): PgBoss {
  return new PgBoss({
    connectionString: PG_URL,
    schema: BOSS_SCHEMA,
    max: POOL,
    supervise: false,
    schedule: false,
  });
}

export async function concurrently(
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

export function reportLoop(tally: Tally, stop: () => Promise<void>): void {
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

export const waitForGo = () =>
  new Promise<void>((resolve) => process.once('message', (m: { t: string }) => m.t === 'go' && resolve()));

export async function inboxWorker(db: Db): Promise<void> {
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

export async function graphileWorker(): Promise<void> {
  const tally = new Tally();
  const start = () => runGraphile(PG_URL, GW_SCHEMA, QUEUE, async (payload) => tally.saw(payload));
  const idle = process.env.HOLDFAST_INBOX_BENCH_IDLE === '1';
  const runner = idle ? await start() : undefined;
  process.send!({ t: 'ready' });
  await waitForGo();
  const live = runner ?? (await start());
  reportLoop(tally, () => live.stop());
}

export async function bossWorker(): Promise<void> {
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

export interface WorkerRun {
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
export async function runWorkers(
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

const role = process.env.HOLDFAST_INBOX_BENCH_ROLE;
if (role?.startsWith('inbox:')) void inboxWorker(role.slice('inbox:'.length) as Db);
if (role === 'graphile') void graphileWorker();
if (role === 'boss') void bossWorker();
