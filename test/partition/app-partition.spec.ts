import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqlClientFor, tableName, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  TcpProxy,
  soakDatabase,
  tsRegisterPath,
  uniqueTablePrefix,
  waitForExit,
  waitUntil,
} from '@holdfast/testing';
import { checkHistory, formatReport, simbaTerms } from '../../tools/history/check';
import { readHistory } from '../../tools/history/history';
import { AppReplicas, LEADER_MUTEX, type Replica } from '../deploy/support/app-replicas';
import { NetworkNamespace } from './support/network-namespace';
import { serverPort, serverUrlThrough } from './support/server-url';
import { FAILOVER_TABLES } from '@holdfast/failover';
import { INBOX_TABLES } from '@holdfast/inbox';
import { SIMBA_TABLES } from '@holdfast/simba';

const REPLICAS = 3;
const STANDBY_POLL = 500;
/** Simba's defaults in the app: ttl 10 s + transition 6 s; a long partition outlasts both. */
const LONG_PARTITION_MS = 20_000;
const SHORT_PARTITION_MS = 8_000;
const SETTLE_MS = 5_000;
const EXIT_BOUND = 30_000;
/** How long the leader job's work takes before its fenced write (so a paused leader has writes in flight). */
const FENCED_WORK_MS = 300;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Partitions between application processes and the database, made in the network: each replica
 * of the ordinary app (Simba leader job, inbox handler, failover method) runs in a network
 * namespace of its own and reaches the server through a veth pair; a partition takes the pair
 * down, so packets are dropped without a reset. Under the rolling-deploy test's load (calls go to
 * replicas in service; a partitioned one is taken out of service first, as a failing readiness
 * probe would): the leader is cut off for longer than ttl + transition, then healed; a standby is
 * cut off and healed; the new leader is cut off for less than ttl + transition and healed; then the
 * leader is paused (SIGSTOP) for longer than ttl + transition and resumed. The leader job writes
 * the user's own table through `fenced()` after a piece of work, so the paused leader wakes up with
 * writes under its old token in flight: every one it sends after it resumes must be refused. The
 * shared history must hold: never two leaders on the database clock, fencing tokens that only
 * grow, no leader job outside its term, no accepted message lost, no stale answer past its expiry,
 * and leadership must move away from a leader cut off for good.
 */
// One server (HOLDFAST_TEST_SOAK_ALL=1: both): how each driver notices a dead path (statement
// bounds, keepalives, a blackholed or silenced connection) is tested on both servers in the default
// suites (test/inbox/blackhole, unanswered-claim, unanswered-heartbeat, silent-connections of each
// module, quiet-outage); this soak checks the whole app's history under partitions, on MariaDB.
const servers = soakDatabase(['mariadb', 'postgres'] as const);

describe('network partitions between app processes and the database', () => {
  it('can make a network namespace here (root and ip netns, as on the CI machine)', () => {
    const ns = NetworkNamespace.create(`p${process.pid % 100000}x`, 16_000 + (process.pid % 300));
    ns.destroy();
  });

  if (!servers.length) return;

  it.each(servers)(
    `[%s] ${REPLICAS} replicas in their own namespaces: the leader, a standby, the new leader cut off and healed`,
    async (db) => {
      const dir = mkdtempSync(join(tmpdir(), 'partition-'));
      const prefix = uniqueTablePrefix(`part_${db}`);
      const apps = new AppReplicas(db, prefix, dir, STANDBY_POLL);
      const dataSource = await createTestDataSource(db);
      const sql = sqlClientFor(dataSource);
      const namespaces: NetworkNamespace[] = [];
      const proxies: TcpProxy[] = [];
      const byReplica = new Map<Replica, NetworkNamespace>();
      const events: string[] = [];
      const t0 = Date.now();
      const note = (text: string) => events.push(`${((Date.now() - t0) / 1000).toFixed(1)} s ${text}`);
      try {
        await apps.createLedger(sql);
        for (let i = 0; i < REPLICAS; i++) {
          const ns = NetworkNamespace.create(
            `${db[0]}${process.pid % 100000}${i}`,
            (process.pid % 1000) * 8 + (db === 'postgres' ? 0 : 4) + i,
          );
          namespaces.push(ns);
          const proxy = new TcpProxy(serverPort(db));
          proxies.push(proxy);
          const port = await proxy.start(0, ns.hostIp);
          const replica = apps.start(
            { ...serverUrlThrough(db, ns.hostIp, port), FENCED_WORK_MS: String(FENCED_WORK_MS) },
            ns.forkOptions(tsRegisterPath()),
          );
          byReplica.set(replica, ns);
        }
        await Promise.all(apps.replicas.map((r) => apps.ready(r)));
        apps.startLoad();
        await waitUntil(() => apps.jobs().length > 0 && apps.leader() !== undefined, {
          timeout: 60_000,
          message: 'a leader job to run',
        });
        await sleep(SETTLE_MS);

        const replicaNamed = (name?: string) => apps.replicas.find((r) => r.name === name)!;
        const cutOff = async (replica: Replica, ms: number, what: string) => {
          replica.inService = false;
          await waitUntil(() => replica.pending === 0, {
            timeout: 30_000,
            message: `${replica.name}'s calls to end`,
          });
          byReplica.get(replica)!.partition();
          note(`${what} ${replica.name} cut off`);
          await sleep(ms);
          byReplica.get(replica)!.heal();
          note(`${replica.name} healed`);
          await apps.backInService(replica);
          note(`${replica.name} ready again`);
        };

        // 1. The leader, for longer than ttl + transition: another replica must lead.
        const first = replicaNamed(apps.leader());
        const cut = cutOff(first, LONG_PARTITION_MS, 'the leader');
        await waitUntil(() => apps.leader() !== undefined && apps.leader() !== first.name, {
          timeout: LONG_PARTITION_MS + 30_000,
          message: `another replica to lead after ${first.name} was cut off`,
        });
        note(`${apps.leader()} leads`);
        await cut;
        await sleep(SETTLE_MS);

        // 2. A standby.
        const standby = apps.replicas.find((r) => r.name !== apps.leader())!;
        await cutOff(standby, SHORT_PARTITION_MS, 'a standby');
        await sleep(SETTLE_MS);

        // 3. The new leader, for less than ttl + transition.
        await cutOff(replicaNamed(apps.leader()), SHORT_PARTITION_MS, 'the leader');
        await waitUntil(() => apps.leader() !== undefined, {
          timeout: 60_000,
          message: 'a leader after the last heal',
        });
        note(`${apps.leader()} leads`);
        const jobsBefore = apps.jobs().length;
        await sleep(SETTLE_MS);
        const jobsAfterHeal = apps.jobs().length - jobsBefore;

        // 4. The leader paused for longer than ttl + transition, mid-work, then resumed.
        const paused = replicaNamed(apps.leader());
        paused.inService = false;
        await waitUntil(() => paused.pending === 0, {
          timeout: 30_000,
          message: `${paused.name}'s calls to end`,
        });
        const pausedAt = Date.now();
        paused.child.kill('SIGSTOP');
        note(`the leader ${paused.name} paused`);
        const pausedTokens = new Set(
          apps
            .jobs()
            .filter((j) => j.proc === paused.name)
            .map((j) => j.token),
        );
        await waitUntil(
          () => apps.fencedWrites().some((w) => w.proc !== paused.name && w.accepted && w.sentAt > pausedAt),
          {
            timeout: LONG_PARTITION_MS + 30_000,
            message: `another leader's fenced write after ${paused.name} paused`,
          },
        );
        note(`${apps.leader()} leads and has written the ledger`);
        await sleep(Math.max(0, pausedAt + LONG_PARTITION_MS - Date.now()));
        const resumedAt = Date.now();
        paused.child.kill('SIGCONT');
        note(`${paused.name} resumed`);
        await apps.backInService(paused);
        await sleep(SETTLE_MS);
        const afterResume = apps
          .fencedWrites()
          .filter((w) => w.proc === paused.name && w.sentAt >= resumedAt);
        const ledgerFence = await apps.ledgerFence(sql);
        const acceptedTokens = apps
          .fencedWrites()
          .filter((w) => w.accepted)
          .map((w) => w.token);

        const remaining = await apps.finishLoad(sql, prefix);
        for (const r of apps.alive()) r.child.kill('SIGTERM');
        await Promise.all(apps.replicas.map((r) => waitForExit(r.child, EXIT_BOUND)));

        const history = readHistory(apps.historyFile);
        const report = checkHistory(history);
        const { terms } = simbaTerms(history.entries, LEADER_MUTEX);
        const strayJobs = apps.strayJobs(terms);
        const errorLines = apps.errorLines();
        const warnLines = apps.warnLines();
        console.log(
          [
            `[partition ${db}] ${REPLICAS} replicas, each in its own network namespace; ttl 10 s, transition 6 s, standbyPoll ${STANDBY_POLL} ms`,
            ...events,
            `leader terms: ${terms.map((t) => `${t.proc} (${t.tokens.length} token(s))`).join(' → ')}; leader job runs ${apps.jobs().length}, ${strayJobs.length} outside their terms, ${jobsAfterHeal} in the ${SETTLE_MS} ms after the last heal`,
            `inbox: ${report.stats.inbox.accepted} accepted, ${report.stats.inbox.delivered} delivered, ${report.stats.inbox.lost} lost, ` +
              `${report.stats.inbox.duplicates} handled twice, ${remaining} left in the table`,
            `fenced ledger: ${apps.fencedWrites().length} writes, ${acceptedTokens.length} accepted, ` +
              `${apps.fencedWrites().filter((w) => w.accepted === false).length} refused, ` +
              `${apps.fencedWrites().filter((w) => w.error).length} failed (cut off), last fence ${ledgerFence}; ` +
              `${paused.name} sent ${afterResume.length} after it resumed (tokens ${[...new Set(afterResume.map((w) => w.token))].join(', ')}), ` +
              `${afterResume.filter((w) => w.accepted).length} accepted`,
            `calls: ${apps.accepts} accepts and ${apps.failoverCalls} failover calls answered (${apps.staleAnswers} from the store), ${apps.failures.length} failed`,
            `log lines: ${errorLines.length} ERROR, ${warnLines.length} WARN`,
            ...errorLines.slice(0, 10),
            ...warnLines.slice(0, 20),
          ].join('\n'),
        );

        if (!report.ok) throw new Error(formatReport(history, report));
        expect(strayJobs).toEqual([]);
        expect(new Set(terms.map((t) => t.proc)).size).toBeGreaterThan(1);
        expect(jobsAfterHeal).toBeGreaterThan(0);
        expect(apps.failures).toEqual([]);
        expect(report.stats.inbox.accepted).toBe(apps.accepts);
        expect(report.stats.inbox.lost).toBe(0);
        // Fencing: the woken leader's writes under its old token(s) were all refused by the table.
        expect(afterResume.length).toBeGreaterThan(0);
        expect(afterResume.every((w) => pausedTokens.has(w.token))).toBe(true);
        expect(afterResume.filter((w) => w.accepted !== false)).toEqual([]);
        expect(ledgerFence).toBe(acceptedTokens.reduce((a, b) => Math.max(a, b), 0));
      } finally {
        await apps.stopLoad();
        for (const ns of namespaces) if (ns.isPartitioned) ns.heal();
        for (const r of apps.alive()) r.child.kill('SIGTERM');
        await Promise.all(apps.replicas.map((r) => waitForExit(r.child, EXIT_BOUND)));
        for (const proxy of proxies) await proxy.stop().catch(() => undefined);
        for (const ns of namespaces) ns.destroy();
        await apps.dropLedger(sql);
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
