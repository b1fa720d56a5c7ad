/**
 * npm run bench -- inbox [--single N] [--bulk N] [--workers 2]
 *
 * @holdfast/inbox against pg-boss 10 on the same PostgreSQL, in the same run:
 *  1. accept rate: single `MessageAcceptor.accept` at concurrency 10 vs `boss.send`;
 *  2. bulk: `acceptAll` vs `boss.insert` (the whole list in one call each);
 *  3. delivery: 2 worker processes each — the inbox delivery loop (no-op handler) vs a tight
 *     `fetch(100)` / `complete(ids)` loop — until everything accepted above is processed.
 * pg-boss gets its own schema (pgboss_bench), dropped afterwards; the inbox table likewise.
 */
import 'reflect-metadata';
import type { ChildProcess } from 'node:child_process';
import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import PgBoss from 'pg-boss';
import { forkTs, waitForExit, waitForMessage } from '@holdfast/core/testing';
import { InboxHandler, InboxModule, MessageAcceptor, type InboxMessage } from '@holdfast/inbox';

const PG_URL = process.env.HOLDFAST_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PREFIX = 'hf_bench_inbox_';
const BOSS_SCHEMA = 'pgboss_bench';
const QUEUE = 'bench';
const TYPE = { namespace: 'bench', name: 'item' };
const POOL = 10;

function arg(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

async function dataSource(): Promise<DataSource> {
  return new DataSource({ type: 'postgres', url: PG_URL, poolSize: POOL, extra: { max: POOL } }).initialize();
}

@Injectable()
class NoopHandler {
  delivered = 0;
  @InboxHandler(TYPE)
  async handle(_message: InboxMessage): Promise<void> {
    this.delivered++;
  }
}

async function inboxApp(ds: DataSource, deliver: boolean): Promise<INestApplicationContext> {
  @Module({
    imports: [
      InboxModule.forRoot({
        dataSource: ds,
        tablePrefix: PREFIX,
        schema: 'create',
        deliver,
        cluster: 'competing',
        batchSize: 100,
        pollInterval: '50ms',
      }),
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

async function inboxWorker(): Promise<void> {
  const ds = await dataSource();
  const app = await inboxApp(ds, false);
  const handler = app.get(NoopHandler);
  process.send!({ t: 'ready' });
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  await app.close();
  // Deliver with the module's own loop, started now (deliver: true).
  const live = await inboxApp(ds, true);
  const h = live.get(NoopHandler);
  const report = setInterval(() => process.send!({ t: 'count', n: h.delivered + handler.delivered }), 100);
  process.once('message', () => {
    clearInterval(report);
    void live
      .close()
      .then(() => ds.destroy())
      .finally(() => process.exit(0));
  });
}

async function bossWorker(): Promise<void> {
  const boss = newBoss();
  await boss.start();
  process.send!({ t: 'ready' });
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  let done = 0;
  let stop = false;
  process.once('message', () => (stop = true));
  const report = setInterval(() => process.send!({ t: 'count', n: done }), 100);
  while (!stop) {
    const jobs = await boss.fetch(QUEUE, { batchSize: 100 });
    if (!jobs.length) {
      await new Promise((r) => setTimeout(r, 50));
      continue;
    }
    await boss.complete(
      QUEUE,
      jobs.map((j) => j.id),
    );
    done += jobs.length;
  }
  clearInterval(report);
  await boss.stop({ graceful: false, wait: false });
  process.exit(0);
}

/** Starts `n` workers of a kind, releases them together, and times them through `total` messages. */
async function timeWorkers(role: string, n: number, total: number): Promise<number> {
  const children: ChildProcess[] = Array.from({ length: n }, () =>
    forkTs(__filename, [], { env: { ...process.env, HOLDFAST_INBOX_BENCH_ROLE: role } }),
  );
  await Promise.all(children.map((c) => waitForMessage(c, (m: { t: string }) => m.t === 'ready', 60_000)));
  const counts = new Map<ChildProcess, number>();
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  for (const c of children) {
    c.on('message', (m: { t: string; n: number }) => {
      if (m.t !== 'count') return;
      counts.set(c, m.n);
      if ([...counts.values()].reduce((a, b) => a + b, 0) >= total) finish();
    });
  }
  const started = performance.now();
  for (const c of children) c.send({ t: 'go' });
  await finished;
  const elapsed = performance.now() - started;
  for (const c of children) c.send({ t: 'stop' });
  await Promise.all(children.map((c) => waitForExit(c, 15_000)));
  return elapsed;
}

// ---- main -------------------------------------------------------------------------------------

export async function main(args: string[]): Promise<void> {
  const single = arg(args, 'single', 5_000);
  const bulk = arg(args, 'bulk', 50_000);
  const workers = arg(args, 'workers', 2);

  const ds = await dataSource();
  await ds.query(`DROP TABLE IF EXISTS ${PREFIX}COR_MESSAGE`);
  await ds.query(`DROP SCHEMA IF EXISTS ${BOSS_SCHEMA} CASCADE`);
  const app = await inboxApp(ds, false);
  const acceptor = app.get(MessageAcceptor);
  const boss = newBoss();
  boss.on('error', (e) => console.error('pg-boss:', e));
  await boss.start();
  await boss.createQueue(QUEUE);

  try {
    // Warm both up (connections, plans).
    await concurrently(200, 10, (i) => acceptor.accept({ type: TYPE, payload: { warm: i } }));
    await concurrently(200, 10, (i) => boss.send(QUEUE, { warm: i }));

    // Each measurement runs in two halves, ABBA, so neither side profits from going second
    // (warmer caches) or suffers from it (a bigger table, autovacuum).
    const acceptSingle = (n: number, from: number) =>
      concurrently(n, 10, (i) => acceptor.accept({ type: TYPE, payload: { i: from + i } }));
    const sendSingle = (n: number, from: number) =>
      concurrently(n, 10, (i) => boss.send(QUEUE, { i: from + i }));
    const half = Math.floor(single / 2);
    let tInbox = await acceptSingle(half, 0);
    let tBoss = await sendSingle(half, 0);
    tBoss += await sendSingle(single - half, half);
    tInbox += await acceptSingle(single - half, half);

    const timed = async (work: () => Promise<unknown>) => {
      const t = performance.now();
      await work();
      return performance.now() - t;
    };
    const bulkHalf = Math.floor(bulk / 2);
    const messages = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({ type: TYPE, payload: { i: from + i } }));
    const jobs = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({ name: QUEUE, data: { i: from + i } }));
    const m1 = messages(0, bulkHalf);
    const j1 = jobs(0, bulkHalf);
    const m2 = messages(bulkHalf, bulk - bulkHalf);
    const j2 = jobs(bulkHalf, bulk - bulkHalf);
    let tInboxBulk = await timed(() => acceptor.acceptAll(m1));
    let tBossBulk = await timed(() => boss.insert(j1));
    tBossBulk += await timed(() => boss.insert(j2));
    tInboxBulk += await timed(() => acceptor.acceptAll(m2));

    await app.close();
    const total = single + bulk + 200;
    const tInboxDeliver = await timeWorkers('inbox', workers, total);
    const tBossDeliver = await timeWorkers('boss', workers, total);
    const left = Number((await ds.query(`SELECT COUNT(*) AS c FROM ${PREFIX}COR_MESSAGE`))[0].c);

    const rate = (n: number, ms: number) => (n / ms) * 1000;
    const rows = [
      ['accept ×1, concurrency 10', rate(single, tInbox), 'send', rate(single, tBoss)],
      [`acceptAll (${bulk})`, rate(bulk, tInboxBulk), 'insert', rate(bulk, tBossBulk)],
      [
        `delivery, ${workers} processes (${total})`,
        rate(total, tInboxDeliver),
        'fetch(100)/complete',
        rate(total, tBossDeliver),
      ],
    ] as const;
    console.log('\n@holdfast/inbox vs pg-boss 10 (PostgreSQL, same run; messages per second)\n');
    console.log(
      `| ${'operation'.padEnd(34)} | ${'inbox/s'.padStart(9)} | ${'pg-boss op'.padEnd(19)} | ${'pg-boss/s'.padStart(9)} | ratio |`,
    );
    console.log(`|${'-'.repeat(36)}|${'-'.repeat(11)}|${'-'.repeat(21)}|${'-'.repeat(11)}|-------|`);
    for (const [op, ours, theirsOp, theirs] of rows) {
      console.log(
        `| ${op.padEnd(34)} | ${ours.toFixed(0).padStart(9)} | ${theirsOp.padEnd(19)} | ${theirs.toFixed(0).padStart(9)} | ${(ours / theirs).toFixed(2).padStart(5)} |`,
      );
    }
    console.log(`\n(ratio = inbox / pg-boss; goal ≥ 1.00. Inbox rows left after delivery: ${left})`);
  } finally {
    await boss.stop({ graceful: false, wait: true }).catch(() => undefined);
    await ds.query(`DROP TABLE IF EXISTS ${PREFIX}COR_MESSAGE`);
    await ds.query(`DROP SCHEMA IF EXISTS ${BOSS_SCHEMA} CASCADE`);
    await ds.destroy();
  }
}

const role = process.env.HOLDFAST_INBOX_BENCH_ROLE;
if (role === 'inbox') void inboxWorker();
if (role === 'boss') void bossWorker();
