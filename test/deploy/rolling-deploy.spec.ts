import type { ChildProcess } from 'node:child_process';
import { readFileSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqlClientFor, tableName } from '@holdfast/core';
import {
  createTestDataSource,
  forkTs,
  testDatabases,
  uniqueTablePrefix,
  waitForExit,
  waitForMessage,
  waitUntil,
} from '@holdfast/core/testing';
import { FAILOVER_STORE_TABLE } from '@holdfast/failover';
import { COR_MESSAGE_TABLE } from '@holdfast/inbox';
import { SIMBA_MUTEX_TABLE } from '@holdfast/simba';
import { checkHistory, formatReport, simbaTerms } from '../../tools/history/check';
import { readHistory, type SimbaGrant, type SimbaRelease } from '../../tools/history/history';

const WORKER = join(__dirname, 'workers', 'rolling-app.worker.ts');
const MUTEX = 'deploy-leader';
const REPLICAS = 3;
/** Simba's standbyPoll in the apps (its default); ttl and transition keep their defaults (10 s + 6 s). */
const STANDBY_POLL = 500;
/** Generous bounds for a small shared machine; what is measured is printed. */
const EXIT_BOUND = 30_000;
const HANDOVER_BOUND = STANDBY_POLL + 5_000;
const BOOT_BOUND = 120_000;
/** How long the load runs before the first replacement, between replacements and after the last. */
const SETTLE_MS = 3_000;
/** About how often the driver calls accept and the failover method (each on a random app in service). */
const ACCEPT_EVERY_MS = 25;
const FAILOVER_EVERY_MS = 50;
const KEYS = ['a', 'b', 'c', 'd', 'e'];
/** Nest's ConsoleLogger line at ERROR level: `[Nest] <pid>  - <date>   ERROR [Context] ...`. */
const NEST_ERROR_LINE = /^\[Nest\]\s+\d+\s+-\s.*?\bERROR\b/;

interface Replica {
  name: string;
  child: ChildProcess;
  /** Lines of stdout and stderr, prefixed with the replica's name. */
  output: string[];
  /** Calls sent and not answered yet. */
  pending: number;
  inService: boolean;
}

interface Job {
  proc: string;
  token: number;
  at: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A rolling deploy of an ordinary app (Simba leader job, inbox with a handler, a failover method;
 * `schema: 'create'`; `enableShutdownHooks()`), as Kubernetes does it: three replicas, then each
 * is replaced in turn, the new one started first and the old one taken out of service and sent
 * SIGTERM once the new one is ready, while messages are accepted and the failover method is called
 * all along, through the apps. Nothing may show: every old process exits by itself, leadership
 * moves within about `standbyPoll`, never two leaders, no message lost or handled twice, no failed
 * call, no ERROR line.
 */
describe('deploy: a rolling deploy is a non-event', () => {
  it.each(testDatabases())(
    `[%s] ${REPLICAS} replicas replaced one by one under load`,
    async (db) => {
      const dir = mkdtempSync(join(tmpdir(), 'rolling-deploy-'));
      const sqliteFile = db === 'sqlite' ? join(dir, 'app.sqlite') : '';
      const historyFile = join(dir, 'history.jsonl');
      const jobsFile = join(dir, 'jobs.jsonl');
      const shutdownFile = `${jobsFile}.shutdown`;
      writeFileSync(historyFile, '');
      writeFileSync(jobsFile, '');
      const prefix = uniqueTablePrefix(`roll_${db}`);
      const replicas: Replica[] = [];
      const failures: string[] = [];
      /** When each key last had a fresh answer (the store holds a value from then on). */
      const lastFresh = new Map<string, number>();
      const keyOf = new Map<number, string>();
      let accepts = 0;
      let failoverCalls = 0;
      let staleAnswers = 0;
      let started = 0;

      const start = (): Replica => {
        const name = `r${++started}`;
        const child = forkTs(
          WORKER,
          [db, prefix, historyFile, jobsFile, name, String(STANDBY_POLL), sqliteFile],
          {
            stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
            env: { ...process.env, NO_COLOR: '1' },
          },
        );
        const replica: Replica = { name, child, output: [], pending: 0, inService: false };
        for (const stream of [child.stdout!, child.stderr!]) {
          let rest = '';
          stream.setEncoding('utf8');
          stream.on('data', (chunk: string) => {
            const lines = (rest + chunk).split('\n');
            rest = lines.pop()!;
            for (const line of lines) replica.output.push(line);
          });
          stream.on('end', () => rest && replica.output.push(rest));
        }
        child.on(
          'message',
          (m: { t: string; id?: string; seq?: number; fresh?: boolean; error?: string }) => {
            if (m.t === 'accept-done' || m.t === 'failover-done') replica.pending--;
            if (m.t === 'accept-done') {
              if (m.error) failures.push(`${name} accept ${m.id}: ${m.error}`);
              else accepts++;
            } else if (m.t === 'failover-done') {
              if (m.error) failures.push(`${name} failover call ${m.seq}: ${m.error}`);
              else {
                failoverCalls++;
                if (!m.fresh) staleAnswers++;
                else if (!lastFresh.has(keyOf.get(m.seq!)!)) lastFresh.set(keyOf.get(m.seq!)!, Date.now());
              }
            }
          },
        );
        replicas.push(replica);
        return replica;
      };
      const ready = async (replica: Replica) => {
        const m = await waitForMessage<{ t: string; error?: string }>(
          replica.child,
          (x) => x.t === 'ready' || x.t === 'failed',
          BOOT_BOUND,
        );
        if (m.t !== 'ready') throw new Error(`${replica.name} failed to boot: ${m.error}`);
        replica.inService = true;
      };
      const pick = (): Replica | undefined => {
        const live = replicas.filter((r) => r.inService && r.child.connected);
        return live[Math.floor(Math.random() * live.length)];
      };

      // The load: accepts with unique ids, failover calls whose upstream fails every other time
      // for a key that had a fresh answer a while ago (so a stored value exists).
      let loading = true;
      let nextId = 0;
      let nextSeq = 0;
      const acceptLoop = (async () => {
        while (loading) {
          const r = pick();
          if (r) {
            r.pending++;
            r.child.send({ t: 'accept', id: `m-${++nextId}` });
          }
          await sleep(ACCEPT_EVERY_MS);
        }
      })();
      const failoverLoop = (async () => {
        while (loading) {
          const r = pick();
          if (r) {
            const seq = ++nextSeq;
            const key = KEYS[seq % KEYS.length];
            const fresh = lastFresh.get(key);
            const fail = seq % 2 === 0 && fresh !== undefined && Date.now() - fresh > 1_000;
            keyOf.set(seq, key);
            r.pending++;
            r.child.send({ t: 'failover', seq, key, fail });
          }
          await sleep(FAILOVER_EVERY_MS);
        }
      })();

      const jobs = (): Job[] =>
        existsSync(jobsFile)
          ? readFileSync(jobsFile, 'utf8')
              .split('\n')
              .filter(Boolean)
              .map((l) => JSON.parse(l) as Job)
          : [];
      const grants = () =>
        readHistory(historyFile).entries.filter(
          (e): e is (SimbaGrant | SimbaRelease) & { line: number } => e.kind === 'simba',
        );

      /** The process that holds the mutex by the history (its last acquire not followed by its release). */
      const leader = (): string | undefined => {
        let owner: string | undefined;
        for (const e of grants().sort((a, b) => a.line - b.line)) {
          if (e.op === 'acquire') owner = e.proc;
          else if (e.op === 'release' && e.proc === owner) owner = undefined;
        }
        return owner;
      };
      /** What each replica's last shutdown hook wrote: the signal and its inbox SQL retry count. */
      const shutdowns = (): Map<
        string,
        { signal?: string; inboxRetries: number; runningAtShutdown?: number }
      > =>
        new Map(
          (existsSync(shutdownFile)
            ? readFileSync(shutdownFile, 'utf8').split('\n').filter(Boolean)
            : []
          ).map((l) => {
            const { proc, ...rest } = JSON.parse(l) as {
              proc: string;
              signal?: string;
              inboxRetries: number;
              runningAtShutdown?: number;
            };
            return [proc, rest];
          }),
        );

      const dataSource = await createTestDataSource(db, { sqliteFile: sqliteFile || undefined });
      const sql = sqlClientFor(dataSource);
      const exits: {
        name: string;
        ms: number;
        code: number | null;
        signal: string | null;
        wasLeader: boolean;
      }[] = [];
      const handovers: { from: string; to: string; gapMs: number }[] = [];
      try {
        // First deploy: three replicas boot together on fresh tables.
        const first = Array.from({ length: REPLICAS }, () => start());
        await Promise.all(first.map(ready));
        await waitUntil(() => jobs().length > 0, { timeout: 60_000, message: 'a leader job to run' });
        await sleep(SETTLE_MS);

        // The rolling deploy.
        for (const old of first) {
          const fresh = start();
          await ready(fresh);
          await sleep(SETTLE_MS / 3);
          // Out of service first (as an endpoint leaves the Service), then its calls in flight end.
          old.inService = false;
          await waitUntil(() => old.pending === 0, {
            timeout: 30_000,
            message: `${old.name}'s calls to end`,
          });
          const wasLeader = leader() === old.name;
          const sentAt = Date.now();
          old.child.kill('SIGTERM');
          const code = await waitForExit(old.child, EXIT_BOUND);
          exits.push({
            name: old.name,
            ms: Date.now() - sentAt,
            code,
            signal: old.child.signalCode,
            wasLeader,
          });
          await sleep(SETTLE_MS);
        }

        // Stop the load, then wait for every call to be answered and every message to be handled.
        loading = false;
        await Promise.all([acceptLoop, failoverLoop]);
        await waitUntil(() => replicas.every((r) => !r.inService || r.pending === 0), {
          timeout: 30_000,
          message: 'every call to be answered',
        });
        const table = tableName(prefix, COR_MESSAGE_TABLE.name);
        const left = async () =>
          Number((await sql.query<{ c: unknown }>(`SELECT COUNT(*) AS c FROM ${table}`))[0].c);
        // Not a failure by itself: what is still there shows below as lost messages, with the figures.
        await waitUntil(async () => (await left()) === 0, {
          timeout: 60_000,
          message: 'the inbox to be empty',
        }).catch(() => undefined);
        const remaining = await left();
        // The new replicas are stopped too (no load now), so every replica reports its retries.
        const finalExits: typeof exits = [];
        for (const r of replicas.filter((x) => x.child.exitCode === null && x.child.signalCode === null)) {
          const wasLeader = leader() === r.name;
          const sentAt = Date.now();
          r.child.kill('SIGTERM');
          const code = await waitForExit(r.child, EXIT_BOUND);
          finalExits.push({
            name: r.name,
            ms: Date.now() - sentAt,
            code,
            signal: r.child.signalCode,
            wasLeader,
          });
        }

        // Checks.
        const history = readHistory(historyFile);
        const report = checkHistory(history);
        const { terms } = simbaTerms(history.entries, MUTEX);
        const simba = grants().sort((a, b) => a.line - b.line);
        for (const release of simba.filter((e) => e.op === 'release')) {
          const next = simba.find((e) => e.op === 'acquire' && e.proc !== release.proc && e.at >= release.at);
          if (next) handovers.push({ from: release.proc, to: next.proc, gapMs: next.at - release.at });
        }
        // The leader job ran only inside its process's terms (token and database time), 250 ms of
        // clock-estimate tolerance.
        const strayJobs = jobs().filter(
          (job) =>
            !terms.some(
              (t) =>
                t.proc === job.proc &&
                t.tokens.some((token) => Number(token) === job.token) &&
                job.at >= t.start - 250 &&
                job.at <= t.end + 250,
            ),
        );
        const deployOutput = replicas.flatMap((r) => r.output.map((line) => `${r.name}: ${line}`));
        const errorLines = deployOutput.filter((l) => NEST_ERROR_LINE.test(l.slice(l.indexOf(': ') + 2)));
        const warnLines = deployOutput.filter((l) => /\bWARN\b/.test(l));

        console.log(
          [
            `[rolling deploy ${db}] ${REPLICAS} replicas replaced one by one (standbyPoll ${STANDBY_POLL} ms, ttl 10 s, transition 6 s)`,
            `exit after SIGTERM: ${exits.map((e) => `${e.name}${e.wasLeader ? ' (leader)' : ''} ${e.ms} ms (${e.signal ?? `code ${e.code}`}, ${shutdowns().get(e.name)?.runningAtShutdown ?? '?'} handler runs in progress at SIGTERM)`).join(', ')}`,
            `final stop of the new replicas: ${finalExits.map((e) => `${e.name}${e.wasLeader ? ' (leader)' : ''} ${e.ms} ms (${e.signal ?? `code ${e.code}`})`).join(', ')}`,
            `leader terms: ${terms.map((t) => `${t.proc}`).join(' → ')}; handover gaps (next acquire − release, database clock): ${
              handovers.map((h) => `${h.from}→${h.to} ${h.gapMs} ms`).join(', ') || 'none'
            }`,
            `leader job runs: ${jobs().length}, outside their terms: ${strayJobs.length}`,
            `inbox: ${report.stats.inbox.accepted} accepted, ${report.stats.inbox.delivered} delivered, ` +
              `${report.stats.inbox.lost} lost, ${report.stats.inbox.duplicates} handled twice, ${remaining} left in the table; ` +
              `inbox SQL retries per replica: ${replicas.map((r) => `${r.name} ${shutdowns().get(r.name)?.inboxRetries ?? '?'}`).join(', ')}`,
            `calls: ${accepts} accepts and ${failoverCalls} failover calls answered (${staleAnswers} from the store), ${failures.length} failed`,
            `log lines: ${errorLines.length} ERROR, ${warnLines.length} WARN`,
            ...warnLines.slice(0, 10),
          ].join('\n'),
        );

        if (!report.ok) throw new Error(formatReport(history, report));
        expect(remaining).toBe(0);
        for (const e of [...exits, ...finalExits]) {
          // By itself: Nest's shutdown ran (the hook reported) and the process ended on its own,
          // before waitForExit's SIGKILL.
          expect({ name: e.name, signal: e.signal }).toEqual({ name: e.name, signal: 'SIGTERM' });
          expect(e.ms).toBeLessThan(EXIT_BOUND);
        }
        for (const r of replicas)
          expect({ name: r.name, hook: shutdowns().get(r.name)?.signal }).toEqual({
            name: r.name,
            hook: 'SIGTERM',
          });
        expect(exits.some((e) => e.wasLeader)).toBe(true);
        expect(handovers.length).toBeGreaterThan(0);
        for (const h of handovers) expect(h.gapMs).toBeLessThan(HANDOVER_BOUND);
        expect(strayJobs).toEqual([]);
        expect(failures).toEqual([]);
        expect(report.stats.inbox.accepted).toBe(accepts);
        expect(report.stats.inbox.lost).toBe(0);
        expect(report.stats.inbox.duplicates).toBe(0);
        expect(staleAnswers).toBeGreaterThan(0);
        expect(errorLines).toEqual([]);
      } finally {
        loading = false;
        for (const r of replicas)
          if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGTERM');
        await Promise.all(replicas.map((r) => waitForExit(r.child, EXIT_BOUND)));
        for (const spec of [SIMBA_MUTEX_TABLE, COR_MESSAGE_TABLE, FAILOVER_STORE_TABLE]) {
          await sql.execute(`DROP TABLE IF EXISTS ${tableName(prefix, spec.name)}`).catch(() => undefined);
        }
        await dataSource.destroy();
      }
    },
    600_000,
  );
});
