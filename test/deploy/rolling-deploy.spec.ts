import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqlClientFor, tableName, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  soakDatabase,
  uniqueTablePrefix,
  waitForExit,
  waitUntil,
} from '@holdfast/testing';
import { checkHistory, formatReport, simbaTerms } from '../../tools/history/check';
import { readHistory } from '../../tools/history/history';
import { AppReplicas, LEADER_MUTEX as MUTEX } from './support/app-replicas';
import { FAILOVER_TABLES } from '@holdfast/failover';
import { INBOX_TABLES } from '@holdfast/inbox';
import { SIMBA_TABLES } from '@holdfast/simba';

const REPLICAS = 3;
/** Simba's standbyPoll in the apps (its default); ttl and transition keep their defaults (10 s + 6 s). */
const STANDBY_POLL = 500;
/** Generous bounds for a small shared machine; what is measured is printed. */
const EXIT_BOUND = 30_000;
const HANDOVER_BOUND = STANDBY_POLL + 5_000;
/** How long the load runs before the first replacement, between replacements and after the last. */
const SETTLE_MS = 3_000;

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
// A process's lifecycle (shutdown hooks, drain, handover) on one database (HOLDFAST_TEST_SOAK_ALL=1:
// all three); the statements behind it run on every database in the default suites.
describe('deploy: a rolling deploy is a non-event', () => {
  it.each(soakDatabase(['postgres', 'mariadb', 'sqlite'] as const))(
    `[%s] ${REPLICAS} replicas replaced one by one under load`,
    async (db) => {
      const dir = mkdtempSync(join(tmpdir(), 'rolling-deploy-'));
      const sqliteFile = db === 'sqlite' ? join(dir, 'app.sqlite') : '';
      const prefix = uniqueTablePrefix(`roll_${db}`);
      const apps = new AppReplicas(db, prefix, dir, STANDBY_POLL, sqliteFile);
      const { replicas, failures, historyFile } = apps;

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
        const first = Array.from({ length: REPLICAS }, () => apps.start());
        await Promise.all(first.map((r) => apps.ready(r)));
        apps.startLoad();
        await waitUntil(() => apps.jobs().length > 0, { timeout: 60_000, message: 'a leader job to run' });
        await sleep(SETTLE_MS);

        // The rolling deploy.
        for (const old of first) {
          const fresh = apps.start();
          await apps.ready(fresh);
          await sleep(SETTLE_MS / 3);
          // Out of service first (as an endpoint leaves the Service), then its calls in flight end.
          old.inService = false;
          await waitUntil(() => old.pending === 0, {
            timeout: 30_000,
            message: `${old.name}'s calls to end`,
          });
          const wasLeader = apps.leader() === old.name;
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
        const remaining = await apps.finishLoad(sql, prefix);
        // The new replicas are stopped too (no load now), so every replica reports its retries.
        const finalExits: typeof exits = [];
        for (const r of apps.alive()) {
          const wasLeader = apps.leader() === r.name;
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
        const simba = apps.grants().sort((a, b) => a.line - b.line);
        for (const release of simba.filter((e) => e.op === 'release')) {
          const next = simba.find((e) => e.op === 'acquire' && e.proc !== release.proc && e.at >= release.at);
          if (next) handovers.push({ from: release.proc, to: next.proc, gapMs: next.at - release.at });
        }
        const strayJobs = apps.strayJobs(terms);
        const errorLines = apps.errorLines();
        const warnLines = apps.warnLines();

        console.log(
          [
            `[rolling deploy ${db}] ${REPLICAS} replicas replaced one by one (standbyPoll ${STANDBY_POLL} ms, ttl 10 s, transition 6 s)`,
            `exit after SIGTERM: ${exits.map((e) => `${e.name}${e.wasLeader ? ' (leader)' : ''} ${e.ms} ms (${e.signal ?? `code ${e.code}`}, ${apps.shutdowns().get(e.name)?.runningAtShutdown ?? '?'} handler runs in progress at SIGTERM)`).join(', ')}`,
            `final stop of the new replicas: ${finalExits.map((e) => `${e.name}${e.wasLeader ? ' (leader)' : ''} ${e.ms} ms (${e.signal ?? `code ${e.code}`})`).join(', ')}`,
            `leader terms: ${terms.map((t) => `${t.proc}`).join(' → ')}; handover gaps (next acquire − release, database clock): ${
              handovers.map((h) => `${h.from}→${h.to} ${h.gapMs} ms`).join(', ') || 'none'
            }`,
            `leader job runs: ${apps.jobs().length}, outside their terms: ${strayJobs.length}`,
            `inbox: ${report.stats.inbox.accepted} accepted, ${report.stats.inbox.delivered} delivered, ` +
              `${report.stats.inbox.lost} lost, ${report.stats.inbox.duplicates} handled twice, ${remaining} left in the table; ` +
              `inbox SQL retries per replica: ${replicas.map((r) => `${r.name} ${apps.shutdowns().get(r.name)?.inboxRetries ?? '?'}`).join(', ')}`,
            `calls: ${apps.accepts} accepts and ${apps.failoverCalls} failover calls answered (${apps.staleAnswers} from the store), ${failures.length} failed`,
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
          expect({ name: r.name, hook: apps.shutdowns().get(r.name)?.signal }).toEqual({
            name: r.name,
            hook: 'SIGTERM',
          });
        expect(exits.some((e) => e.wasLeader)).toBe(true);
        expect(handovers.length).toBeGreaterThan(0);
        for (const h of handovers) expect(h.gapMs).toBeLessThan(HANDOVER_BOUND);
        expect(strayJobs).toEqual([]);
        expect(failures).toEqual([]);
        expect(report.stats.inbox.accepted).toBe(apps.accepts);
        expect(report.stats.inbox.lost).toBe(0);
        expect(report.stats.inbox.duplicates).toBe(0);
        expect(apps.staleAnswers).toBeGreaterThan(0);
        expect(errorLines).toEqual([]);
      } finally {
        await apps.stopLoad();
        for (const r of replicas)
          if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGTERM');
        await Promise.all(replicas.map((r) => waitForExit(r.child, EXIT_BOUND)));
        for (const spec of [
          SIMBA_TABLES.mutex,
          INBOX_TABLES.message,
          INBOX_TABLES.lease,
          FAILOVER_TABLES.store,
        ]) {
          await sql
            .execute(statement(`DROP TABLE IF EXISTS ${tableName(prefix, spec.name)}`))
            .catch(() => undefined);
        }
        await dataSource.destroy();
      }
    },
    600_000,
  );
});
