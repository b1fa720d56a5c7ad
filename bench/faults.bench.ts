/**
 * npm run bench -- faults [--db postgres,mariadb] [--runs 5] [--faults restart,pause,blackhole,pool]
 *   [--fault-ms 12000] [--out docs/faults.json]
 * HOLDFAST_FAULTS_DEBUG=1 prints every replica's locker state at each recovery poll.
 * (or HOLDFAST_BENCH_DATABASES, HOLDFAST_FAULTS_RUNS, HOLDFAST_FAULTS, HOLDFAST_FAULTS_MS,
 * HOLDFAST_FAULTS_OUT; HOLDFAST_FAULTS_PORT is the first of three ports it uses, default 25440).
 *
 * What production does to a database, per database and fault, under the rolling-deploy app's load
 * (test/deploy: 3 replicas, each with a Simba leader job, a lease-database locker master, an inbox
 * handler and a `@Failover` method; accepts with unique ids and failover calls keep coming):
 * - restart:   the private server restarted at once (PostgreSQL immediate shutdown; MariaDB SIGKILL)
 *              and started again; the fault ends when it accepts connections again;
 * - pause:     every server process SIGSTOPped for the fault time (longer than Simba's ttl +
 *              transition and the locker's lease), then SIGCONTed;
 * - blackhole: the TCP proxy between the replicas and the server stops forwarding without closing
 *              anything (and refuses new connections) for the fault time, then accepts connections
 *              again; the silenced connections stay silent for good, the app has to replace them;
 * - pool:      other work on each replica's own DataSource keeps every pool connection busy for the
 *              fault time (one slow statement per pool connection, issued again until the end).
 * Each lib's recovery is timed from the fault's end (see `recovered` below); then the shared
 * history is checked (tools/history) and every run's calls are counted. Private servers only, on
 * their own ports and temp directories; the shared servers are never touched.
 */
import { inboxTable } from '@holdfast/inbox';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { sqlClientFor, tableName, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  PrivateMariadb,
  PrivatePostgres,
  TcpProxy,
  uniqueTablePrefix,
  waitForExit,
  waitForMessage,
  waitUntil,
  type PrivateServer,
} from '@holdfast/testing';
import { checkHistory, historySlice, simbaTerms, type Property } from '../tools/history/check';
import { readHistory, type HistoryEntry } from '../tools/history/history';
import { AppReplicas, LEADER_MUTEX, type Replica } from '../test/deploy/support/app-replicas';
import { median, printTable } from './support/bench-kit';

const FAULTS = ['restart', 'pause', 'blackhole', 'pool'] as const;
type Fault = (typeof FAULTS)[number];
const LIBS = ['simba', 'locker', 'inbox', 'failover'] as const;
type Lib = (typeof LIBS)[number];
type Db = 'postgres' | 'mariadb';

const REPLICAS = 3;
const STANDBY_POLL = 500;
/** Simba and the locker run with short leases here, so a renewal follows soon after any fault. */
const SIMBA_TTL_MS = 4_000;
const SIMBA_TRANSITION_MS = 4_000;
const LOCKER_INTERVAL_MS = 4_000;
/** How long a lib may take to recover before the run counts it as not recovered. */
const RECOVER_BOUND_MS = 30_000;
/** Quiet time under load before each fault (and after the last recovery). */
const SETTLE_MS = 3_000;
const EXIT_BOUND_MS = 30_000;
const URL_ENV = { postgres: 'HOLDFAST_TEST_PG_URL', mariadb: 'HOLDFAST_TEST_MARIADB_URL' } as const;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Options {
  dbs: Db[];
  runs: number;
  faults: Fault[];
  faultMs: number;
  out: string;
  port: number;
}

interface Run {
  run: number;
  /** Epoch ms (host clock, which the local servers share). */
  faultStart: number;
  faultEnd: number;
  /** ms from the fault's end until each lib was back to normal; null: not within the bound. */
  recover: Record<Lib, number | null>;
  failedFailoverCalls: number;
  failedAccepts: number;
  failures: string[];
  /** For a lib not back to normal within the bound: what was still missing. */
  notRecovered: Partial<Record<Lib, string>>;
}

interface Row {
  fault: Fault;
  lib: Lib;
  db: Db;
  runs: number;
  recoverMedianMs: number | null;
  recoverMaxMs: number | null;
  notRecovered: number;
  violations: number | null;
  lost: number | null;
  duplicates: number | null;
  failedFailoverCalls: number | null;
  /** The history slice of the first violation, when there is one. */
  firstViolation?: { property: string; message: string; slice: string };
}

interface Cell {
  db: Db;
  fault: Fault;
  runs: Run[];
  rows: Row[];
  notes: string[];
  durationMs: number;
}

function option(args: string[], name: string, env: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return (i >= 0 ? args[i + 1] : undefined) ?? process.env[env] ?? fallback;
}

function parseOptions(args: string[]): Options {
  const list = (s: string) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
  const dbs = list(option(args, 'db', 'HOLDFAST_BENCH_DATABASES', 'postgres,mariadb')).filter(
    (d): d is Db => d === 'postgres' || d === 'mariadb',
  );
  const faults = list(option(args, 'faults', 'HOLDFAST_FAULTS', FAULTS.join(',')));
  for (const f of faults)
    if (!(FAULTS as readonly string[]).includes(f))
      throw new Error(`unknown fault '${f}' (${FAULTS.join(', ')})`);
  return {
    dbs,
    runs: Math.max(1, Number(option(args, 'runs', 'HOLDFAST_FAULTS_RUNS', '5'))),
    faults: faults as Fault[],
    faultMs: Number(option(args, 'fault-ms', 'HOLDFAST_FAULTS_MS', '12000')),
    out: resolve(option(args, 'out', 'HOLDFAST_FAULTS_OUT', join(__dirname, '..', 'docs', 'faults.json'))),
    port: Number(option(args, 'port', 'HOLDFAST_FAULTS_PORT', '25440')),
  };
}

/** Asks every live replica for its locker's state. */
async function lockerStates(
  apps: AppReplicas,
): Promise<{ name: string; role?: string; lastError?: string; lastKeepAlive?: number }[]> {
  return Promise.all(
    apps.alive().map(async (r) => {
      const reply = waitForMessage<{ t: string; role?: string; lastError?: string; lastKeepAlive?: number }>(
        r.child,
        (m) => m.t === 'locker',
        5_000,
      );
      r.child.send({ t: 'locker' });
      return { name: r.name, ...(await reply.catch(() => ({ role: 'no answer' }))) };
    }),
  );
}

/**
 * When each lib was back to normal after `faultEnd` (epoch ms), from the history and the
 * replicas' answers:
 * - simba: a leader job ran under a grant (acquisition or renewal, its fencing token = the
 *   database time of the grant) the database made after the fault ended;
 * - locker: exactly one replica is master, its last keep-alive succeeded after the fault ended,
 *   and no replica reports a lock-store error;
 * - inbox: every replica has delivered a message accepted after the fault ended;
 * - failover: after the fault ended every replica's method has answered fresh (upstream up) and
 *   from the store (upstream failing: a stored answer read back), both.
 */
async function measureRecovery(
  apps: AppReplicas,
  faultEnd: number,
): Promise<{ recover: Record<Lib, number | null>; missing: Partial<Record<Lib, string>> }> {
  const missing: Partial<Record<Lib, string>> = {};
  const at: Record<Lib, number | undefined> = {
    simba: undefined,
    locker: undefined,
    inbox: undefined,
    failover: undefined,
  };
  const deadline = Date.now() + RECOVER_BOUND_MS;
  while (Date.now() < deadline && LIBS.some((l) => at[l] === undefined)) {
    if (at.simba === undefined) {
      const job = apps.jobs().find((j) => j.at >= faultEnd && j.token >= faultEnd);
      if (job) at.simba = job.at;
      else missing.simba = `last leader job ${JSON.stringify(apps.jobs().at(-1))}`;
    }
    if (at.inbox === undefined || at.failover === undefined) {
      const entries = readHistory(apps.historyFile).entries.filter((e) => e.at >= faultEnd);
      // Every replica, not just one: each instance has to be back to normal.
      const names = apps.alive().map((r) => r.name);
      const latest = (times: (number | undefined)[]) =>
        times.every((t) => t !== undefined) ? Math.max(...(times as number[])) : undefined;
      const without = (times: (number | undefined)[]) =>
        `not yet on ${names.filter((_, i) => times[i] === undefined).join(', ')}`;
      if (at.inbox === undefined) {
        const accepted = new Set(
          entries.filter((e) => e.kind === 'inbox' && e.op === 'accept').map((e) => (e as { id: string }).id),
        );
        const times = names.map(
          (name) =>
            entries.find(
              (e) =>
                e.proc === name &&
                e.kind === 'inbox' &&
                e.op === 'deliver' &&
                accepted.has((e as { id: string }).id),
            )?.at,
        );
        at.inbox = latest(times);
        missing.inbox = without(times);
      }
      if (at.failover === undefined) {
        const answers = entries.filter((e) => e.kind === 'failover') as (HistoryEntry & { fresh: boolean })[];
        const times = names.map((name) =>
          latest([
            answers.find((e) => e.proc === name && e.fresh)?.at,
            answers.find((e) => e.proc === name && !e.fresh)?.at,
          ]),
        );
        at.failover = latest(times);
        missing.failover = without(times);
      }
    }
    if (at.locker === undefined) {
      const polledAt = Date.now();
      const states = await lockerStates(apps);
      const masters = states.filter((s) => s.role === 'master');
      if (
        masters.length === 1 &&
        (masters[0].lastKeepAlive ?? 0) >= faultEnd &&
        states.every((s) => s.lastError === undefined && s.role !== 'no answer')
      )
        at.locker = Math.max(polledAt, masters[0].lastKeepAlive!);
      else missing.locker = JSON.stringify(states);
      if (process.env.HOLDFAST_FAULTS_DEBUG)
        console.log(`DEBUG +${polledAt - faultEnd} ms`, JSON.stringify(states));
    }
    await sleep(250);
  }
  const recover = Object.fromEntries(
    LIBS.map((l) => [l, at[l] === undefined ? null : Math.max(0, at[l]! - faultEnd)]),
  ) as Record<Lib, number | null>;
  for (const l of LIBS) if (at[l] !== undefined) delete missing[l];
  return { recover, missing };
}

/** Applies the fault; resolves at its end. */
async function applyFault(
  fault: Fault,
  server: PrivateServer,
  proxy: TcpProxy,
  apps: AppReplicas,
  faultMs: number,
): Promise<void> {
  switch (fault) {
    case 'restart':
      await server.restart();
      return;
    case 'pause':
      await server.pause();
      await sleep(faultMs);
      server.resume();
      return;
    case 'blackhole':
      proxy.blackhole();
      await sleep(faultMs);
      proxy.restore();
      return;
    case 'pool': {
      const until = Date.now() + faultMs;
      const done = apps
        .alive()
        .map((r) => waitForMessage<{ t: string }>(r.child, (m) => m.t === 'hog-done', faultMs + 60_000));
      for (const r of apps.alive()) r.child.send({ t: 'hog', until });
      await Promise.all(done);
      return;
    }
  }
}

const libOf = (property: Property): Lib | 'history' =>
  property.startsWith('simba.')
    ? 'simba'
    : property.startsWith('locker.')
      ? 'locker'
      : property.startsWith('inbox.')
        ? 'inbox'
        : property.startsWith('failover.')
          ? 'failover'
          : 'history';

async function runCell(db: Db, fault: Fault, server: PrivateServer, options: Options): Promise<Cell> {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), `holdfast-faults-${db}-${fault}-`));
  const prefix = uniqueTablePrefix(`flt_${db[0]}_${fault}`);
  const proxy = new TcpProxy(server.port);
  const notes: string[] = [];
  const runs: Run[] = [];
  const apps = new AppReplicas(db, prefix, dir, STANDBY_POLL);
  const dataSource = await createTestDataSource(db);
  const sql = sqlClientFor(dataSource);
  const log = (text: string) => console.log(`[faults ${db} ${fault}] ${text}`);
  try {
    const proxyPort = await proxy.start(options.port + 2 + (db === 'postgres' ? 0 : 1));
    const url = new URL(server.url);
    url.port = String(proxyPort);
    const env = {
      [URL_ENV[db]]: url.toString(),
      APP_LOCKER_INTERVAL_MS: String(LOCKER_INTERVAL_MS),
      SIMBA_TTL_MS: String(SIMBA_TTL_MS),
      SIMBA_TRANSITION_MS: String(SIMBA_TRANSITION_MS),
    };
    // One at a time: the first creates the tables (schema 'create') while the others wait.
    const first = apps.start(env);
    await apps.ready(first);
    const rest = Array.from({ length: REPLICAS - 1 }, () => apps.start(env));
    await Promise.all(rest.map((r) => apps.ready(r)));
    apps.startLoad();
    // Normal to begin with: every lib has done its work since the load started.
    const loadStart = Date.now();
    const { recover: normal, missing: notNormal } = await measureRecovery(apps, loadStart);
    if (LIBS.some((l) => normal[l] === null))
      throw new Error(`not normal before any fault: ${JSON.stringify(notNormal)}`);
    log(`booted, normal after ${Math.max(...LIBS.map((l) => normal[l]!))} ms of load`);

    for (let run = 1; run <= options.runs; run++) {
      await sleep(SETTLE_MS);
      const failuresBefore = apps.failures.length;
      const faultStart = Date.now();
      await applyFault(fault, server, proxy, apps, options.faultMs);
      const faultEnd = Date.now();
      const { recover, missing } = await measureRecovery(apps, faultEnd);
      await sleep(SETTLE_MS);
      const failures = apps.failures.slice(failuresBefore);
      const r: Run = {
        run,
        faultStart,
        faultEnd,
        recover,
        failedFailoverCalls: failures.filter((f) => f.includes('failover call')).length,
        failedAccepts: failures.filter((f) => f.includes(' accept ')).length,
        failures: failures.slice(0, 5),
        notRecovered: missing,
      };
      runs.push(r);
      log(
        `run ${run}: fault ${faultEnd - faultStart} ms; recovered ${LIBS.map((l) => `${l} ${recover[l] ?? 'never'}`).join(', ')} ms; ` +
          `${r.failedFailoverCalls} failover calls and ${r.failedAccepts} accepts failed` +
          Object.entries(missing)
            .map(([lib, what]) => `; ${lib} not back: ${what}`)
            .join(''),
      );
    }

    // The end of the load: every call answered, every accepted message delivered (bounded; what
    // is still missing then is what the checker reports as lost).
    await apps.stopLoad();
    await waitUntil(() => apps.replicas.every((r) => !r.inService || r.pending === 0), {
      timeout: 60_000,
      message: 'every call to be answered',
    }).catch((error: Error) => notes.push(`calls unanswered at the end: ${error.message}`));
    await waitUntil(() => checkHistory(readHistory(apps.historyFile)).stats.inbox.lost === 0, {
      timeout: 30_000,
      interval: 500,
      message: 'every accepted message to be delivered',
    }).catch(() => undefined);
    const remaining = await sql
      .query<{ c: unknown }>(statement(`SELECT COUNT(*) AS c FROM ${tableName(prefix, inboxTable())}`))
      .then((rows) => Number(rows[0].c))
      .catch((error: Error) => `unknown (${error.message})`);
    for (const r of apps.alive()) r.child.kill('SIGTERM');
    await Promise.all(
      apps.replicas.map((r) =>
        waitForExit(r.child, EXIT_BOUND_MS).catch(() => {
          r.child.kill('SIGKILL');
          notes.push(`${r.name} did not exit within ${EXIT_BOUND_MS} ms of SIGTERM (killed)`);
        }),
      ),
    );

    const history = readHistory(apps.historyFile);
    const report = checkHistory(history);
    const { terms } = simbaTerms(history.entries, LEADER_MUTEX);
    const stray = apps.strayJobs(terms);
    const errorLines = apps.errorLines();
    notes.push(
      `inbox: ${report.stats.inbox.accepted} accepted, ${report.stats.inbox.delivered} delivered, ${remaining} left in the table; ` +
        `calls: ${apps.accepts} accepts and ${apps.failoverCalls} failover calls answered (${apps.staleAnswers} from the store), ${apps.failures.length} failed; ` +
        `simba: ${report.stats.simba[LEADER_MUTEX]?.terms ?? 0} leader terms; locker: ${Object.values(report.stats.locker)[0]?.terms ?? 0} master terms; ` +
        `${errorLines.length} ERROR log lines`,
    );
    const kinds = new Map<string, number>();
    for (const f of apps.failures) {
      const kind = f
        .replace(/^r\d+ /, '')
        .replace(/^accept m-\d+/, 'accept')
        .replace(/^failover call \d+/, 'failover call')
        .replace(/ for [a-e]$/, '');
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    if (kinds.size)
      notes.push(`failed calls by message: ${[...kinds].map(([k, n]) => `${n}× ${k}`).join('; ')}`);
    const stuck = apps.replicas.filter((r) => r.pending > 0);
    if (stuck.length)
      notes.push(`calls never answered: ${stuck.map((r) => `${r.name} ${r.pending}`).join(', ')}`);
    if (errorLines.length) notes.push(`first ERROR lines: ${errorLines.slice(0, 3).join(' / ')}`);
    if (stray.length)
      notes.push(
        `${stray.length} leader job run(s) outside their term: ${JSON.stringify(stray.slice(0, 3))}`,
      );
    const other = report.violations.filter((v) => libOf(v.property) === 'history');
    if (other.length) notes.push(`history: ${other.map((v) => v.message).join('; ')}`);

    const rows: Row[] = LIBS.map((lib) => {
      const times = runs.map((r) => r.recover[lib]);
      const done = times.filter((t): t is number => t !== null);
      const violations = report.violations.filter((v) => libOf(v.property) === lib);
      const first = violations[0];
      const strayCount = lib === 'simba' ? stray.length : 0;
      return {
        fault,
        lib,
        db,
        runs: runs.length,
        recoverMedianMs: done.length ? Math.round(median(done)) : null,
        recoverMaxMs: done.length === times.length && done.length ? Math.max(...done) : null,
        notRecovered: times.length - done.length,
        violations: violations.length + strayCount,
        lost: lib === 'inbox' ? report.stats.inbox.lost : null,
        duplicates: lib === 'inbox' ? report.stats.inbox.duplicates : null,
        failedFailoverCalls: lib === 'failover' ? runs.reduce((s, r) => s + r.failedFailoverCalls, 0) : null,
        ...(first
          ? {
              firstViolation: {
                property: first.property,
                message: first.message,
                slice: historySlice(history.entries, first),
              },
            }
          : strayCount
            ? {
                firstViolation: {
                  property: 'simba.stray-job',
                  message: `leader job outside its term: ${JSON.stringify(stray[0])}`,
                  slice: JSON.stringify(terms.map((t) => ({ proc: t.proc, start: t.start, end: t.end }))),
                },
              }
            : {}),
      };
    });
    return { db, fault, runs, rows, notes, durationMs: Date.now() - started };
  } finally {
    await apps.stopLoad();
    for (const r of apps.alive()) r.child.kill('SIGKILL');
    await Promise.all(
      apps.replicas.map((r: Replica) => waitForExit(r.child, EXIT_BOUND_MS).catch(() => undefined)),
    );
    server.resume();
    proxy.restore();
    await proxy.stop().catch(() => undefined);
    await dataSource.destroy().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

const ms = (v: number | null) => (v === null ? '—' : String(v));
const count = (v: number | null) => (v === null ? '—' : String(v));

export async function main(args: string[]): Promise<void> {
  const options = parseOptions(args);
  const cells: Cell[] = [];
  const began = new Date();
  console.log(
    `faults bench: ${options.dbs.join(', ')}; faults ${options.faults.join(', ')}; ${options.runs} run(s) each; ` +
      `fault ${options.faultMs} ms (restart: as long as the restart takes); ${REPLICAS} replicas; ` +
      `simba ttl ${SIMBA_TTL_MS} ms + transition ${SIMBA_TRANSITION_MS} ms, standbyPoll ${STANDBY_POLL} ms; ` +
      `locker lease-database interval ${LOCKER_INTERVAL_MS} ms`,
  );
  for (const db of options.dbs) {
    const server =
      db === 'postgres'
        ? new PrivatePostgres({ port: options.port })
        : new PrivateMariadb({ port: options.port + 1 });
    const saved = process.env[URL_ENV[db]];
    try {
      await server.start();
      process.env[URL_ENV[db]] = server.url;
      for (const fault of options.faults) {
        try {
          cells.push(await runCell(db, fault, server, options));
        } catch (error) {
          console.error(`[faults ${db} ${fault}] failed: ${(error as Error).stack ?? error}`);
          cells.push({
            db,
            fault,
            runs: [],
            rows: [],
            notes: [`cell failed: ${(error as Error).message}`],
            durationMs: 0,
          });
        }
        if (server.pid === undefined) await server.start();
      }
    } finally {
      if (saved === undefined) delete process.env[URL_ENV[db]];
      else process.env[URL_ENV[db]] = saved;
      await server.destroy();
    }
  }

  const rows = options.faults.flatMap((fault) =>
    LIBS.flatMap((lib) =>
      options.dbs.flatMap(
        (db) => cells.find((c) => c.db === db && c.fault === fault)?.rows.filter((r) => r.lib === lib) ?? [],
      ),
    ),
  );
  printTable(
    `Recovery after database faults (${options.runs} run(s) per cell; ms from the fault's end)`,
    [
      'fault',
      'lib',
      'db',
      'recover median ms',
      'recover max ms',
      'violations',
      'lost',
      'duplicates',
      'failed failover calls',
    ],
    rows.map((r) => [
      r.fault,
      r.lib,
      r.db,
      ms(r.recoverMedianMs),
      r.notRecovered ? `${r.notRecovered}/${r.runs} not within ${RECOVER_BOUND_MS} ms` : ms(r.recoverMaxMs),
      count(r.violations),
      count(r.lost),
      count(r.duplicates),
      count(r.failedFailoverCalls),
    ]),
  );
  for (const c of cells) {
    console.log(`\n${c.db} ${c.fault} (${Math.round(c.durationMs / 1000)} s): ${c.notes.join('\n  ')}`);
    for (const r of c.rows.filter((x) => x.firstViolation)) {
      console.log(
        `first ${r.lib} violation [${r.firstViolation!.property}] ${r.firstViolation!.message}\n${r.firstViolation!.slice}`,
      );
    }
    const failing = c.runs.flatMap((r) => r.failures.map((f) => `run ${r.run}: ${f}`));
    if (failing.length)
      console.log(`failed calls (first of each run):\n  ${failing.slice(0, 12).join('\n  ')}`);
  }
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(
    options.out,
    `${JSON.stringify(
      {
        bench: 'faults',
        started: began.toISOString(),
        finished: new Date().toISOString(),
        settings: {
          databases: options.dbs,
          faults: options.faults,
          runs: options.runs,
          faultMs: options.faultMs,
          replicas: REPLICAS,
          simba: { ttlMs: SIMBA_TTL_MS, transitionMs: SIMBA_TRANSITION_MS, standbyPollMs: STANDBY_POLL },
          locker: { type: 'lease-database', intervalMs: LOCKER_INTERVAL_MS },
          recoverBoundMs: RECOVER_BOUND_MS,
        },
        rows,
        cells: cells.map(({ rows: _rows, ...c }) => c),
      },
      null,
      2,
    )}\n`,
  );
  console.log(`\nwritten to ${options.out}`);
}
