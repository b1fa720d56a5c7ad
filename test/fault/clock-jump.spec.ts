import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
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
import { checkHistory, formatReport } from '../../tools/history/check';
import { readHistory } from '../../tools/history/history';
import { AppReplicas, LEADER_MUTEX, type Replica } from '../deploy/support/app-replicas';
import { FAILOVER_TABLES } from '@holdfast/failover';
import { INBOX_TABLES } from '@holdfast/inbox';
import { SIMBA_TABLES } from '@holdfast/simba';

const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const REPLICAS = 3;
const STANDBY_POLL = 500;
/** How long each phase runs; libfaketime re-reads a process's offset file once a second. */
const PHASE_MS = 8_000;
const EXIT_BOUND = 30_000;
const HOUR = 3_600_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The application hosts' wall clocks step (an NTP step, a VM resumed) while the app runs: each
 * replica runs under libfaketime with its own offset file, re-read every second, and only the wall
 * clock moves (FAKETIME_DONT_FAKE_MONOTONIC), as in a real step. The leader's clock jumps an hour
 * ahead, then an hour behind while a standby's is an hour ahead, then both come back, under the
 * rolling-deploy test's load. Holdfast decides with the database's clock and the monotonic clock,
 * so nothing may show: never two leaders on the database clock, fencing tokens that only grow, the
 * leader's job running in every phase, no message lost or handled twice, no stale answer past its
 * expiry, every call answered, no ERROR line.
 *
 * Server databases only: on SQLite the database clock is the host's own, so a step moves the
 * clock every process decides with (the README says what that means for leases).
 */
// The property (every process decides on the database's clock, not its own) does not depend on
// which server: one of them (HOLDFAST_TEST_SOAK_ALL=1: both). Each dialect's clock statements run
// on every database in the default suites.
const servers = soakDatabase(['postgres', 'mariadb'] as const);

describe('a wall-clock jump of an application process', () => {
  it('has libfaketime to jump with (CI installs Debian faketime)', () => {
    expect(existsSync(LIBFAKETIME)).toBe(true);
  });

  if (!servers.length) return;

  it.each(servers)(
    `[%s] ${REPLICAS} replicas, the leader's clock +1 h then −1 h, a standby's +1 h, under load`,
    async (db) => {
      const dir = mkdtempSync(join(tmpdir(), 'clock-jump-'));
      const prefix = uniqueTablePrefix(`jump_${db}`);
      const apps = new AppReplicas(db, prefix, dir, STANDBY_POLL);
      const offsetFile = (r: Replica) => join(dir, `${r.name}.faketime`);
      const offsetOf = new Map<string, string>();
      const setOffset = (r: Replica, offset: string) => {
        offsetOf.set(r.name, offset === '+0' ? '0h' : offset);
        writeFileSync(offsetFile(r), `${offset}\n`);
      };
      const dataSource = await createTestDataSource(db);
      const sql = sqlClientFor(dataSource);
      const phases: { name: string; jobs: number; leader?: string; offsets: string }[] = [];
      try {
        for (let i = 1; i <= REPLICAS; i++) {
          offsetOf.set(`r${i}`, '0h');
          writeFileSync(join(dir, `r${i}.faketime`), '+0\n');
        }
        const started = Array.from({ length: REPLICAS }, (_, i) =>
          apps.start({
            LD_PRELOAD: LIBFAKETIME,
            FAKETIME_TIMESTAMP_FILE: join(dir, `r${i + 1}.faketime`),
            FAKETIME_CACHE_DURATION: '1',
            FAKETIME_DONT_FAKE_MONOTONIC: '1',
            FAKETIME_DONT_RESET: '1',
          }),
        );
        await Promise.all(started.map((r) => apps.ready(r)));
        apps.startLoad();
        await waitUntil(() => apps.jobs().length > 0 && apps.leader() !== undefined, {
          timeout: 60_000,
          message: 'a leader job to run',
        });
        await sleep(PHASE_MS / 2);

        const phase = async (
          name: string,
          jumps: (leader: Replica, standby: Replica) => [Replica, string][],
        ) => {
          const leaderName = apps.leader();
          const leader = started.find((r) => r.name === leaderName) ?? started[0];
          const standby = started.find((r) => r !== leader)!;
          for (const [replica, offset] of jumps(leader, standby)) setOffset(replica, offset);
          const before = apps.jobs().length;
          await sleep(PHASE_MS);
          // The jumps are real: each replica's Date.now() against the real time, in whole hours.
          const measured = await Promise.all(
            started.map(async (r) => Math.round((await apps.clockOffset(r)) / HOUR) + 0), // + 0: no -0
          );
          const expected = started.map((r) => Number(offsetOf.get(r.name)!.replace('h', '')));
          expect(measured).toEqual(expected);
          phases.push({
            name,
            jobs: apps.jobs().length - before,
            leader: leader.name,
            offsets: started
              .map((r, i) => `${r.name} ${measured[i] >= 0 ? '+' : ''}${measured[i]} h`)
              .join(', '),
          });
        };
        await phase('leader +1 h', (leader) => [[leader, '+1h']]);
        await phase('leader −1 h, a standby +1 h', (leader, standby) => [
          [leader, '-1h'],
          [standby, '+1h'],
        ]);
        await phase('every clock back', () => started.map((r) => [r, '+0'] as [Replica, string]));

        const remaining = await apps.finishLoad(sql, prefix);
        for (const r of apps.alive()) r.child.kill('SIGTERM');
        await Promise.all(apps.replicas.map((r) => waitForExit(r.child, EXIT_BOUND)));

        const history = readHistory(apps.historyFile);
        const report = checkHistory(history);
        const errorLines = apps.errorLines();
        console.log(
          [
            `[clock jump ${db}] ${REPLICAS} replicas, standbyPoll ${STANDBY_POLL} ms, ${PHASE_MS} ms per phase`,
            ...phases.map(
              (p) => `${p.name} (leader ${p.leader}; clocks ${p.offsets}): ${p.jobs} leader job runs`,
            ),
            `simba: ${report.stats.simba[LEADER_MUTEX]?.terms ?? 0} leader terms (${(report.stats.simba[LEADER_MUTEX]?.owners ?? []).join(', ')}); inbox: ${report.stats.inbox.accepted} accepted, ` +
              `${report.stats.inbox.delivered} delivered, ${report.stats.inbox.lost} lost, ${report.stats.inbox.duplicates} handled twice, ${remaining} left`,
            `calls: ${apps.accepts} accepts and ${apps.failoverCalls} failover calls answered (${apps.staleAnswers} from the store), ${apps.failures.length} failed`,
            `log lines: ${errorLines.length} ERROR, ${apps.warnLines().length} WARN`,
            ...apps.warnLines().slice(0, 10),
          ].join('\n'),
        );

        if (!report.ok) throw new Error(formatReport(history, report));
        for (const p of phases)
          expect({ phase: p.name, ran: p.jobs > 0 }).toEqual({ phase: p.name, ran: true });
        expect(apps.failures).toEqual([]);
        expect(remaining).toBe(0);
        expect(report.stats.inbox.accepted).toBe(apps.accepts);
        expect(report.stats.inbox.lost).toBe(0);
        expect(report.stats.inbox.duplicates).toBe(0);
        expect(apps.staleAnswers).toBeGreaterThan(0);
        expect(errorLines).toEqual([]);
      } finally {
        await apps.stopLoad();
        for (const r of apps.alive()) r.child.kill('SIGTERM');
        await Promise.all(apps.replicas.map((r) => waitForExit(r.child, EXIT_BOUND)));
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
    300_000,
  );
});
