/**
 * npm run bench -- inbox-steady [--db sqlite,postgres,mariadb] [--messages 60000] [--workers 2]
 *                               [--rounds 3] [--options '<set>|<set>|…'] [--profile DIR]
 *
 * Inbox delivery in steady state, per database and option set: `--messages` are accepted first,
 * then `--workers` processes deliver them all (no-op handler; on SQLite one process, its one
 * writer). Printed per database and option set, median over the rounds (the sets take turns in
 * each round):
 *  - the rate from the first message handled anywhere to the last;
 *  - the workers' CPU time per message, each worker's from its own first message on
 *    (`process.cpuUsage`: its start-up is left out, unlike inbox.bench.ts's figure);
 *  - the server's CPU time per message over the same window, for the workers' connections only
 *    (PostgreSQL's backends; MariaDB's connection threads where performance_schema is on; on
 *    SQLite the statements' work is in the workers' figure);
 *  - the rate ÷ the first option set's in the same round: median (min–max).
 * Option sets: `raw`, the database's driver doing the same job by hand
 * (bench/support/raw-inbox-workers.ts: the inbox's largest claim at the default batchSize
 * (1,000) at a time, one claim ahead on the servers, each row made into the message a handler
 * gets and passed to an async handler, a delete of each claim's ids with its lease); `graphile`
 * (PostgreSQL only), graphile-worker 0.17 doing the same delivery from its own schema, in the
 * setup every bench gives it (bench/support/graphile.ts); `{}` the inbox's defaults; any other
 * JSON, inbox options. Default `raw|{}`. `before:<json>` (with `--before DIR`): the same
 * options, delivered by the inbox of another checkout of this repository at DIR (its own copy of
 * this file runs the workers, from its own sources), so that the code before a change and after
 * it take turns in the same rounds: `--options 'raw|before:{}|{}' --before ../main`.
 * No proxy and no other system: this is where the CPU goes, not the round trips (latency.bench.ts).
 * `--profile DIR`: a CPU profile of each worker (node --cpu-prof, sampled every 100 µs).
 */
import 'reflect-metadata';
import type { ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { makeWorkerUtils } from 'graphile-worker';
import { DataSource } from 'typeorm';
import { indexName, sqlClientFor } from '@holdfast/core/kit';
import {
  forkTs,
  tempSqliteFile,
  testDataSourceOptions,
  waitForExit,
  waitForMessage,
  type TestDatabase,
} from '@holdfast/testing';
import {
  InboxHandler,
  InboxModule,
  MessageAcceptor,
  type InboxMessage,
  type InboxModuleOptions,
  INBOX_TABLES,
} from '@holdfast/inbox';
import { SimbaModule } from '@holdfast/simba';
import { resolveInboxOptions } from '../libs/inbox/src/options/inbox-options.schema';
import { largestClaim } from '../libs/inbox/src/delivery/delivery-settings';
import { benchDatabases, median, numberArg, printTable, serverCpu } from './support/bench-kit';
import { runGraphile } from './support/graphile';
import {
  rawMariadbWorker,
  rawPostgresWorker,
  rawSqliteWorker,
  type RawInboxTarget,
  type RawInboxWorker,
} from './support/raw-inbox-workers';

const PREFIX = 'hf_steady_';
const TYPE = { namespace: 'bench', name: 'noop' };
const DEFAULT_OPTION_SETS = 'raw|{}';
const TABLE = `${PREFIX}COR_MESSAGE`;
/** COR_MESSAGE's delivery-order index (INSERTED, ID): the raw worker's claim walks it too. */
const DELIVERY_ORDER_INDEX = INBOX_TABLES.message.indexes!.find((i) => i.columns.join() === 'INSERTED,ID')!;
const GW_SCHEMA = 'graphile_worker_steady';
const GW_TASK = 'noop';

let handled = 0;
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

/** True when an option set's JSON turns `priorities` on. */
function prioritiesOn(options: string): boolean {
  return (JSON.parse(options) as Partial<InboxModuleOptions>).priorities === true;
}

/** The database a worker or the bench runs on: the test database, or the round's SQLite file. */
function dataSourceFor(db: TestDatabase, sqliteFile: string): DataSource {
  return new DataSource({ ...testDataSourceOptions(db, { sqliteFile }), poolSize: 10 } as never);
}

/** SQLite delivers as the leader (one writer), with Simba; the servers as competing nodes. */
async function inboxApp(dataSource: DataSource, deliver: boolean, options: Partial<InboxModuleOptions>) {
  const leader = dataSource.options.type === 'better-sqlite3';
  @Module({
    imports: [
      InboxModule.forRoot({
        dataSource,
        tablePrefix: PREFIX,
        schema: 'create',
        deliver,
        cluster: leader ? 'leader' : 'competing',
        ...options,
      }),
      ...(leader ? [SimbaModule.forRoot({ dataSource, tablePrefix: PREFIX, schema: 'create' })] : []),
    ],
    providers: [NoopHandler],
  })
  class SteadyModule {}
  return NestFactory.createApplicationContext(SteadyModule, { logger: ['error'] });
}

interface WorkerEnv {
  db: TestDatabase;
  sqliteFile: string;
}

function workerEnv(): WorkerEnv {
  return {
    db: process.env.HOLDFAST_STEADY_DB as TestDatabase,
    sqliteFile: process.env.HOLDFAST_STEADY_SQLITE!,
  };
}

/** A worker: delivers from its start, reports its count every 50 ms, its CPU time on 'stop'. */
async function worker(): Promise<void> {
  const { db, sqliteFile } = workerEnv();
  const dataSource = await dataSourceFor(db, sqliteFile).initialize();
  const app = await inboxApp(dataSource, true, JSON.parse(process.env.HOLDFAST_STEADY_OPTIONS ?? '{}'));
  reportUntilStop(() => app.close().then(() => dataSource.destroy()));
}

/** Every worker kind: its count every 50 ms; on 'stop', its CPU time since its first message, then `close`. */
function reportUntilStop(close: () => Promise<unknown>): void {
  const report = setInterval(() => process.send!({ t: 'count', n: handled }), 50);
  process.on('message', (m: { t: string }) => {
    if (m.t !== 'stop') return;
    clearInterval(report);
    const cpu = process.cpuUsage(cpuAtFirst);
    process.send!({ t: 'cpu', ms: (cpu.user + cpu.system) / 1000 });
    void close().finally(() => process.exit(0));
  });
}

/** The baseline worker: the database's driver doing the same job by hand. */
async function rawWorker(): Promise<void> {
  const { db, sqliteFile } = workerEnv();
  const target: RawInboxTarget = {
    table: TABLE,
    orderIndex: indexName(PREFIX, DELIVERY_ORDER_INDEX),
    claimSize: largestClaim(resolveInboxOptions({}).batchSize),
    location: db === 'sqlite' ? sqliteFile : (testDataSourceOptions(db) as { url: string }).url,
  };
  const handler = new NoopHandler();
  const handle = (message: InboxMessage) => handler.handle(message);
  const start = { postgres: rawPostgresWorker, mariadb: rawMariadbWorker, sqlite: rawSqliteWorker }[db];
  const running: RawInboxWorker = await start(target, handle);
  reportUntilStop(() => running.stop());
}

/** graphile-worker's runner (bench/support/graphile.ts), its task the same no-op handler. */
async function graphileWorker(): Promise<void> {
  const handler = new NoopHandler();
  const url = (testDataSourceOptions('postgres') as { url: string }).url;
  const runner = await runGraphile(url, GW_SCHEMA, GW_TASK, async (payload, helpers) =>
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
  const url = (testDataSourceOptions('postgres') as { url: string }).url;
  const utils = await makeWorkerUtils({ connectionString: url, schema: GW_SCHEMA });
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
  'before:{}': 'defaults, before (--before)',
  raw: 'raw driver, same job by hand',
  graphile: 'graphile-worker',
};

interface Run {
  rate: number;
  workerCpu: number;
  /** µs per message, undefined where the server's share cannot be read. */
  databaseCpu?: number;
}

const ANALYZE: Record<TestDatabase, string> = {
  postgres: `ANALYZE ${TABLE}`,
  mariadb: `ANALYZE TABLE ${TABLE}`,
  sqlite: 'ANALYZE',
};

/** Where a worker of option set `set` runs from: this checkout, or `--before`'s for `before:` sets. */
interface Checkout {
  script: string;
  cwd?: string;
  env: NodeJS.ProcessEnv;
}

function checkoutOf(set: string, beforeDir: string | undefined): Checkout {
  if (!set.startsWith('before:')) return { script: __filename, env: {} };
  if (!beforeDir)
    throw new Error(`option set '${set}' needs --before DIR (another checkout of this repository)`);
  const project = join(beforeDir, 'tsconfig.json');
  return {
    script: join(beforeDir, 'bench', 'inbox-steady.bench.ts'),
    cwd: beforeDir,
    env: { SWC_NODE_PROJECT: project, TS_NODE_PROJECT: project },
  };
}

async function runOnce(
  db: TestDatabase,
  set: string,
  messages: number,
  workers: number,
  profile: string | undefined,
  beforeDir: string | undefined,
): Promise<Run> {
  const checkout = checkoutOf(set, beforeDir);
  const options = set.startsWith('before:') ? set.slice('before:'.length) : set;
  const sqliteFile = tempSqliteFile('steady');
  const dataSource = await dataSourceFor(db, sqliteFile).initialize();
  const sql = sqlClientFor(dataSource);
  await dataSource.query(`DROP TABLE IF EXISTS ${TABLE}`);
  // With `priorities` the table is created with its column, and the messages get 0, 1, 2 in turn.
  const priorities = options !== 'raw' && options !== 'graphile' && prioritiesOn(options);
  const app = await inboxApp(dataSource, false, priorities ? { priorities } : {});
  try {
    const acceptor = app.get(MessageAcceptor);
    if (options === 'graphile') await fillGraphile(dataSource, messages);
    else {
      for (let i = 0; i < messages; i += 5_000)
        await acceptor.acceptAll(
          Array.from({ length: Math.min(5_000, messages - i) }, (_, j) => ({
            type: TYPE,
            payload: { i: i + j },
            ...(priorities ? { priority: (i + j) % 3 } : {}),
          })),
        );
      await dataSource.query(ANALYZE[db]);
    }
    const role = options === 'raw' || options === 'graphile' ? options : 'worker';
    const children: ChildProcess[] = Array.from({ length: db === 'sqlite' ? 1 : workers }, () =>
      forkTs(checkout.script, [], {
        execArgv: profile ? ['--cpu-prof', '--cpu-prof-interval', '100', '--cpu-prof-dir', profile] : [],
        cwd: checkout.cwd,
        env: {
          ...process.env,
          ...checkout.env,
          HOLDFAST_STEADY_ROLE: role,
          HOLDFAST_STEADY_OPTIONS: options,
          HOLDFAST_STEADY_DB: db,
          HOLDFAST_STEADY_SQLITE: sqliteFile,
        },
      }),
    );
    const counts = new Map<ChildProcess, number>();
    const server = serverCpu(sql);
    let window: { started: Promise<void>; at: number } | undefined;
    await new Promise<void>((done) => {
      for (const child of children)
        child.on('message', (m: { t: string; n: number }) => {
          if (m.t === 'first') window ??= { started: server.start(), at: performance.now() };
          if (m.t !== 'count') return;
          counts.set(child, m.n);
          if ([...counts.values()].reduce((a, b) => a + b, 0) >= messages) done();
        });
    });
    const elapsed = performance.now() - window!.at;
    await window!.started;
    const databaseCpuMs = server.stop();
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
      databaseCpu: databaseCpuMs === undefined ? undefined : (databaseCpuMs * 1000) / messages,
    };
  } finally {
    await app.close();
    await dataSource.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await dataSource.query(`DROP TABLE IF EXISTS ${PREFIX}HOLDFAST_INBOX_LEASE`);
    await dataSource.query(`DROP TABLE IF EXISTS ${PREFIX}simba_mutex`);
    if (options === 'graphile') await dataSource.query(`DROP SCHEMA IF EXISTS ${GW_SCHEMA} CASCADE`);
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
  const b = args.indexOf('--before');
  const beforeDir = b >= 0 ? resolve(args[b + 1]) : undefined;
  // A typo stops the run before any work.
  for (const set of sets) {
    if (set !== 'raw' && set !== 'graphile') JSON.parse(set.replace(/^before:/, ''));
    checkoutOf(set, beforeDir);
  }
  // graphile-worker runs on PostgreSQL only: with it, PostgreSQL alone unless --db says otherwise
  // (the commands recorded in docs/benchmarks.md before other databases were measured).
  const graphile = sets.includes('graphile');
  const databases = graphile && !args.includes('--db') ? ['postgres' as const] : benchDatabases(args);
  if (graphile && databases.some((db) => db !== 'postgres'))
    throw new Error("--options 'graphile' runs on PostgreSQL only: --db postgres");
  console.log(
    `${messages} messages delivered by ${workers} processes (SQLite: 1), ${rounds} rounds, on ${databases.join(', ')}`,
  );
  const rows: string[][] = [];
  for (const db of databases) {
    const runs = new Map<string, Run[]>(sets.map((s) => [s, []]));
    for (let round = 0; round < rounds; round++)
      for (const set of sets) {
        const run = await runOnce(db, set, messages, workers, profile, beforeDir);
        runs.get(set)!.push(run);
        process.stderr.write(
          `  ${db} round ${round + 1} ${NAMES[set] ?? set}: ${Math.round(run.rate)} msg/s\n`,
        );
      }
    const base = runs.get(sets[0])!;
    for (const set of sets) {
      const r = runs.get(set)!;
      const ratios = r.map((x, i) => x.rate / base[i].rate);
      const server = r.map((x) => x.databaseCpu).filter((x): x is number => x !== undefined);
      rows.push([
        db,
        NAMES[set] ?? set,
        median(r.map((x) => x.rate)).toFixed(0),
        median(r.map((x) => x.workerCpu)).toFixed(1),
        server.length ? median(server).toFixed(1) : '—',
        `${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
      ]);
    }
  }
  printTable(
    'Steady-state delivery (medians over the rounds; ratio ÷ the first option set in the same round)',
    ['database', 'options', 'msg/s', 'CPU µs/msg, workers', 'CPU µs/msg, server', 'rate ratio'],
    rows,
  );
}

if (process.env.HOLDFAST_STEADY_ROLE === 'worker') void worker();
if (process.env.HOLDFAST_STEADY_ROLE === 'raw') void rawWorker();
if (process.env.HOLDFAST_STEADY_ROLE === 'graphile') void graphileWorker();
