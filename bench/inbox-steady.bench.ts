/**
 * npm run bench -- inbox-steady [--messages 60000] [--workers 2] [--rounds 3]
 *                               [--options '<json>|<json>|…'] [--profile DIR]
 *
 * Inbox delivery on PostgreSQL in steady state, per option set: `--messages` are accepted first,
 * then `--workers` processes deliver them all (no-op handler). Printed per option set, median over
 * the rounds (the sets take turns in each round):
 *  - the rate from the first message handled anywhere to the last;
 *  - the workers' CPU time per message, each worker's from its own first message on
 *    (`process.cpuUsage`: its start-up is left out, unlike inbox.bench.ts's figure);
 *  - PostgreSQL's CPU time per message (every server process, from /proc) over the same window.
 * The first option set is the baseline of the ratios. By default: `raw`, the pg driver doing the
 * same job by hand (Holdfast's claim statement, its largest claim at the default batchSize (1,000)
 * at a time with one claim ahead, the payload
 * decoded, the handler called, a delete of each claim's ids with its lease), then the inbox's
 * defaults before 2026-11-27 (`concurrency` 200, `completionBatchSize` 100), then today's (`{}`).
 * No proxy and no other system: this is where the CPU goes, not the round trips (latency.bench.ts)
 * nor the comparison with graphile-worker (inbox.bench.ts).
 * `graphile`: graphile-worker 0.17 doing the same delivery from its own schema, in the setup every
 * bench gives it (bench/support/graphile.ts), its jobs added the same way before the clock starts.
 * `--profile DIR`: a CPU profile of each worker (node --cpu-prof).
 */
import 'reflect-metadata';
import type { ChildProcess } from 'node:child_process';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Client } from 'pg';
import { makeWorkerUtils } from 'graphile-worker';
import { DataSource } from 'typeorm';
import { forkTs, waitForExit, waitForMessage } from '@holdfast/testing';
import {
  InboxHandler,
  InboxModule,
  MessageAcceptor,
  type InboxMessage,
  type InboxModuleOptions,
} from '@holdfast/inbox';
import { resolveInboxOptions } from '../libs/inbox/src/options/inbox-options.schema';
import { largestClaim } from '../libs/inbox/src/delivery/delivery-settings';
import { median, numberArg, postgresCpuMs, printTable } from './support/bench-kit';
import { runGraphile } from './support/graphile';

const PG_URL = process.env.HOLDFAST_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PREFIX = 'hf_steady_';
const TYPE = { namespace: 'bench', name: 'noop' };
const DEFAULT_OPTION_SETS = 'raw|{"concurrency":200,"completionBatchSize":100}|{}';
const TABLE = `${PREFIX}COR_MESSAGE`;
const GW_SCHEMA = 'graphile_worker_steady';
const GW_TASK = 'noop';

let handled = 0;
/** Set on 'stop': the raw worker's claim in flight then fails with its closed connection. */
let stopped = false;
let cpuAtFirst: NodeJS.CpuUsage | undefined;
/** The last message handled (kept, so that no engine can drop the work of making it). */
export let seen: InboxMessage | undefined;

@Injectable()
class NoopHandler {
  @InboxHandler(TYPE)
  async handle(message: InboxMessage): Promise<void> {
    seen = message;
    if (handled++ === 0) {
      cpuAtFirst = process.cpuUsage();
      process.send!({ t: 'first' });
    }
  }
}

async function inboxApp(dataSource: DataSource, deliver: boolean, options: Partial<InboxModuleOptions>) {
  @Module({
    imports: [
      InboxModule.forRoot({
        dataSource,
        tablePrefix: PREFIX,
        schema: 'create',
        deliver,
        cluster: 'competing',
        ...options,
      }),
    ],
    providers: [NoopHandler],
  })
  class SteadyModule {}
  return NestFactory.createApplicationContext(SteadyModule, { logger: ['error', 'warn'] });
}

/** A worker: delivers from its start, reports its count every 50 ms, its CPU time on 'stop'. */
async function worker(): Promise<void> {
  const dataSource = await new DataSource({ type: 'postgres', url: PG_URL, poolSize: 10 }).initialize();
  const app = await inboxApp(dataSource, true, JSON.parse(process.env.HOLDFAST_STEADY_OPTIONS ?? '{}'));
  reportUntilStop(() => app.close().then(() => dataSource.destroy()));
}

/** Every worker kind: its count every 50 ms; on 'stop', its CPU time since its first message, then `close`. */
function reportUntilStop(close: () => Promise<unknown>): void {
  const report = setInterval(() => process.send!({ t: 'count', n: handled }), 50);
  process.on('message', (m: { t: string }) => {
    if (m.t !== 'stop') return;
    stopped = true;
    clearInterval(report);
    const cpu = process.cpuUsage(cpuAtFirst);
    process.send!({ t: 'cpu', ms: (cpu.user + cpu.system) / 1000 });
    void close().finally(() => process.exit(0));
  });
}

const millis = (t: string) => `CAST(FLOOR(EXTRACT(EPOCH FROM ${t}) * 1000) AS BIGINT)`;
/** The claim Holdfast sends on PostgreSQL (ungrouped, no unanswered leases), written by hand. */
const RAW_CLAIM_SIZE = largestClaim(resolveInboxOptions({}).batchSize);
const RAW_CLAIM =
  `WITH claimed AS (UPDATE ${TABLE} SET NEXT_RETRY = CAST($1 AS TIMESTAMPTZ) WHERE ctid = ANY(ARRAY(` +
  `SELECT ctid FROM ${TABLE} WHERE COALESCE((RETRIES < 5 AND (NEXT_RETRY IS NULL OR NEXT_RETRY <= ` +
  `date_trunc('milliseconds', statement_timestamp())) AND (EXPIRATION IS NULL OR EXPIRATION > ` +
  `date_trunc('milliseconds', statement_timestamp()))), FALSE) ORDER BY INSERTED, ID LIMIT ${RAW_CLAIM_SIZE} ` +
  `FOR UPDATE SKIP LOCKED)) RETURNING ${millis("date_trunc('milliseconds', statement_timestamp())")} AS db_now, ` +
  `ID AS id, PAYLOAD_ENCODING AS payload_encoding, PAYLOAD_TYPE_NAMESPACE AS ns, ` +
  `PAYLOAD_TYPE_NAME AS name, PAYLOAD_TYPE_REVISION AS revision, PAYLOAD AS payload, ` +
  `${millis('INSERTED')} AS inserted_ms, TTL_DURATION AS ttl, ${millis('EXPIRATION')} AS expiration_ms, ` +
  `RETRIES AS retries, ${millis('NEXT_RETRY')} AS next_retry_ms, ERROR AS error, INSERTED AS ord_inserted) ` +
  `SELECT db_now, id, payload_encoding, ns, name, revision, payload, inserted_ms, ttl, expiration_ms, ` +
  `retries, next_retry_ms, error FROM claimed ORDER BY ord_inserted, id`;
const RAW_DELETE = `DELETE FROM ${TABLE} WHERE ID = ANY($1::VARCHAR[]) AND NEXT_RETRY = CAST($2 AS TIMESTAMPTZ)`;

interface RawRow {
  id: string;
  ns: string;
  name: string;
  revision: string | null;
  payload: Buffer;
  inserted_ms: string;
  retries: number;
}

/** The baseline worker: the pg driver by hand, one connection claiming, one deleting. */
async function rawWorker(): Promise<void> {
  const claims = new Client({ connectionString: PG_URL });
  const deletes = new Client({ connectionString: PG_URL });
  await Promise.all([claims.connect(), deletes.connect()]);
  const handler = new NoopHandler();
  reportUntilStop(() => Promise.all([claims.end(), deletes.end()]));
  const claim = () => {
    const lease = new Date(Date.now() + 300_000).toISOString();
    return claims
      .query({ name: 'claim', text: RAW_CLAIM, values: [lease] })
      .then((r) => ({ lease, rows: r.rows }));
  };
  let deleting: Promise<unknown> = Promise.resolve();
  let next = claim();
  while (!stopped) {
    const { lease, rows } = await next;
    if (!rows.length) {
      await new Promise((r) => setTimeout(r, 50));
      next = claim();
      continue;
    }
    next = claim(); // one claim ahead, as the inbox's prefetch
    const ids: string[] = [];
    // What a handler gets: the message, its payload decoded.
    await Promise.all(
      rows.map(async (row: RawRow) => {
        const message: InboxMessage = {
          id: row.id,
          type:
            row.revision === null
              ? { namespace: row.ns, name: row.name }
              : { namespace: row.ns, name: row.name, revision: row.revision },
          encoding: 'json',
          payload: JSON.parse(row.payload.toString('utf8')),
          inserted: new Date(Number(row.inserted_ms)),
          retries: row.retries,
        };
        await handler.handle(message);
        ids.push(row.id);
      }),
    );
    deleting = deleting.then(() => deletes.query({ name: 'delete', text: RAW_DELETE, values: [ids, lease] }));
  }
}

/** graphile-worker's runner (bench/support/graphile.ts), its task the same no-op handler. */
async function graphileWorker(): Promise<void> {
  const handler = new NoopHandler();
  const runner = await runGraphile(PG_URL, GW_SCHEMA, GW_TASK, async (payload, helpers) =>
    handler.handle({
      id: helpers.job.id,
      type: TYPE,
      encoding: 'json',
      payload,
      inserted: helpers.job.created_at,
      retries: helpers.job.attempts - 1,
    }),
  );
  reportUntilStop(() => runner.stop());
}

/** Fills graphile-worker's own schema with `messages` jobs (5,000 per call, as the inbox's accepts). */
async function fillGraphile(dataSource: DataSource, messages: number): Promise<void> {
  await dataSource.query(`DROP SCHEMA IF EXISTS ${GW_SCHEMA} CASCADE`);
  const utils = await makeWorkerUtils({ connectionString: PG_URL, schema: GW_SCHEMA });
  try {
    await utils.migrate();
    for (let i = 0; i < messages; i += 5_000)
      await utils.addJobs(
        Array.from({ length: Math.min(5_000, messages - i) }, (_, j) => ({
          identifier: GW_TASK,
          payload: { i: i + j },
        })),
      );
  } finally {
    await utils.release();
  }
  await dataSource.query(`ANALYZE ${GW_SCHEMA}._private_jobs`);
}

const NAMES: Record<string, string> = {
  '{}': 'defaults',
  raw: 'raw driver, same job by hand',
  graphile: 'graphile-worker',
};

interface Run {
  rate: number;
  workerCpu: number;
  databaseCpu: number;
}

async function runOnce(options: string, messages: number, workers: number, profile?: string): Promise<Run> {
  const dataSource = await new DataSource({ type: 'postgres', url: PG_URL, poolSize: 10 }).initialize();
  await dataSource.query(`DROP TABLE IF EXISTS ${PREFIX}COR_MESSAGE`);
  const app = await inboxApp(dataSource, false, {});
  try {
    const acceptor = app.get(MessageAcceptor);
    if (options === 'graphile') await fillGraphile(dataSource, messages);
    else {
      for (let i = 0; i < messages; i += 5_000)
        await acceptor.acceptAll(
          Array.from({ length: Math.min(5_000, messages - i) }, (_, j) => ({
            type: TYPE,
            payload: { i: i + j },
          })),
        );
      await dataSource.query(`ANALYZE ${PREFIX}COR_MESSAGE`);
    }
    const children: ChildProcess[] = Array.from({ length: workers }, () =>
      forkTs(__filename, [], {
        execArgv: profile ? ['--cpu-prof', '--cpu-prof-dir', profile] : [],
        env: {
          ...process.env,
          HOLDFAST_STEADY_ROLE: options === 'raw' || options === 'graphile' ? options : 'worker',
          HOLDFAST_STEADY_OPTIONS: options,
        },
      }),
    );
    const counts = new Map<ChildProcess, number>();
    let window: { cpu: number; at: number } | undefined;
    await new Promise<void>((done) => {
      for (const child of children)
        child.on('message', (m: { t: string; n: number }) => {
          if (m.t === 'first') window ??= { cpu: postgresCpuMs(), at: performance.now() };
          if (m.t !== 'count') return;
          counts.set(child, m.n);
          if ([...counts.values()].reduce((a, b) => a + b, 0) >= messages) done();
        });
    });
    const elapsed = performance.now() - window!.at;
    const databaseCpuMs = postgresCpuMs() - window!.cpu;
    const cpus = await Promise.all(
      children.map(async (child) => {
        const cpu = waitForMessage<{ t: string; ms: number }>(child, (m) => m.t === 'cpu', 15_000);
        child.send({ t: 'stop' });
        return (await cpu).ms;
      }),
    );
    await Promise.all(children.map((child) => waitForExit(child, 15_000)));
    return {
      rate: (messages / elapsed) * 1000,
      workerCpu: (cpus.reduce((a, b) => a + b, 0) * 1000) / messages,
      databaseCpu: (databaseCpuMs * 1000) / messages,
    };
  } finally {
    await app.close();
    await dataSource.query(`DROP TABLE IF EXISTS ${PREFIX}COR_MESSAGE`);
    await dataSource.query(`DROP SCHEMA IF EXISTS ${GW_SCHEMA} CASCADE`);
    await dataSource.destroy();
  }
}

export async function main(args: string[]): Promise<void> {
  const messages = numberArg(args, '--messages', 60_000);
  const workers = numberArg(args, '--workers', 2);
  const rounds = numberArg(args, '--rounds', 3);
  const o = args.indexOf('--options');
  const sets = (o >= 0 ? args[o + 1] : DEFAULT_OPTION_SETS).split('|');
  const p = args.indexOf('--profile');
  const profile = p >= 0 ? args[p + 1] : undefined;
  for (const set of sets) if (set !== 'raw' && set !== 'graphile') JSON.parse(set); // a typo stops the run before any work
  console.log(`${messages} messages delivered by ${workers} processes, ${rounds} rounds, PostgreSQL`);
  const runs = new Map<string, Run[]>(sets.map((s) => [s, []]));
  for (let round = 0; round < rounds; round++)
    for (const set of sets) runs.get(set)!.push(await runOnce(set, messages, workers, profile));
  const base = runs.get(sets[0])!;
  const rows = sets.map((set) => {
    const r = runs.get(set)!;
    const rate = median(r.map((x) => x.rate));
    const ratios = r.map((x, i) => x.rate / base[i].rate);
    return [
      NAMES[set] ?? set,
      rate.toFixed(0),
      median(r.map((x) => x.workerCpu)).toFixed(1),
      median(r.map((x) => x.databaseCpu)).toFixed(1),
      `${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
    ];
  });
  printTable(
    'Steady-state delivery (medians over the rounds; ratio ÷ the first option set in the same round)',
    ['options', 'msg/s', 'CPU per message, workers (µs)', 'CPU per message, PostgreSQL (µs)', 'rate ratio'],
    rows,
  );
}

if (process.env.HOLDFAST_STEADY_ROLE === 'worker') void worker();
if (process.env.HOLDFAST_STEADY_ROLE === 'raw')
  void rawWorker().catch((error) => {
    if (!stopped) throw error;
  });
if (process.env.HOLDFAST_STEADY_ROLE === 'graphile') void graphileWorker();
