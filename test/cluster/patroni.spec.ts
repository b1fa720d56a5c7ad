/**
 * Holdfast on PostgreSQL under Patroni (#36): three nodes, one etcd, HAProxy in front; Simba
 * contenders, competing inbox workers, a @Failover caller and both database lockers of
 * @holdfast/locker (`database` and `lease-database`, three processes each), each its own process,
 * all through the endpoint; the Simba owner and both lockers' masters are SIGKILLed as each fault
 * starts. A switchover with `synchronous_mode` on, then a failover (the leader
 * node SIGKILLed) with asynchronous replicas, then a fast failover (only the leader's PostgreSQL
 * killed, `primary_start_timeout` 0). The lockers' masters tick while they believe they are master:
 * never two at once, one again after each fault. The cluster is started once (ports 26560-26568,
 * or from HOLDFAST_TEST_PATRONI_PORT on) and removed in afterAll.
 * Runs under `npm run test:cluster` (HOLDFAST_TEST_CLUSTERS=1); needs patroni, python3-etcd,
 * etcd-server and haproxy.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SchemaManager, sqlClientFor } from '@holdfast/core/kit';
import { PatroniCluster, uniqueTablePrefix, type PatroniNode } from '@holdfast/testing';
import { seedInbox } from '../inbox/support/seed-inbox';
import { LOCKER_WORKER, checkLockerTicks } from './support/locker-ticks';
import {
  CONTENDER,
  INBOX_WORKER,
  Workers,
  checkTicks,
  failoverSummary,
  sleep,
  startFailoverCaller,
  until,
  type FailoverCall,
} from './support/processes';
import { SIMBA_TABLES } from '@holdfast/simba';

/** The cluster's first port (3 + 2 × 3 consecutive ports); a shared machine may move it. */
const BASE_PORT = Number(process.env.HOLDFAST_TEST_PATRONI_PORT ?? 26560);
const TTL = 2_000;
const TRANSITION = 1_000;
/** Short, so that a claim whose answer was lost comes back within the test. */
const VISIBILITY = 10_000;
const MESSAGES = 600;
/** The failover caller's storeTimeout (FailoverModule's default). */
const STORE_TIMEOUT = 500;
/**
 * What a call may take beyond storeTimeout: the caller's own event loop on a busy machine. A call
 * that waited for the store would wait for the outage itself (seconds).
 */
const CALL_SLACK = 1_500;
/** Both database lockers of @holdfast/locker, LOCKERS processes each, beside the Simba contenders. */
const LOCKER_TYPES = ['database', 'lease-database'] as const;
type LockerType = (typeof LOCKER_TYPES)[number];
const LOCKERS = 3;
/** The lockers' lockAcquireSleepInterval (the lease-database lease) and lockKeepAlivePeriod. */
const LOCK_INTERVAL = 1_000;
const LOCK_KEEP_ALIVE = 250;
/**
 * WARN/ERROR lines a locker process may print from the fault on: seen 1 to 3 (the demotion, the
 * outage, its end); an outage of ~20 s at 4 attempts a second would print dozens if each logged.
 */
const LOCKER_MAX_LINES = 6;

describe('Holdfast on PostgreSQL under Patroni (3 nodes, etcd, HAProxy)', () => {
  const cluster = new PatroniCluster({
    basePort: BASE_PORT,
    nodes: 3,
    synchronous: true,
    // Proxies between each node and etcd and HAProxy, for the node cut.
    isolatable: true,
  });
  const dir = mkdtempSync(join(tmpdir(), 'holdfast-patroni-test-'));
  let setup: DataSource | undefined;
  let workers: Workers | undefined;

  beforeAll(async () => {
    const started = performance.now();
    await cluster.start();
    console.log(`[patroni] 3 nodes, etcd and HAProxy up in ${Math.round(performance.now() - started)} ms`);
  }, 180_000);

  afterEach(async () => {
    await workers?.stop();
    workers = undefined;
    await setup?.destroy().catch(() => undefined);
    setup = undefined;
  });

  afterAll(async () => {
    await cluster.destroy();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  /**
   * Three contenders, three inbox workers and the lockers through the endpoint; `fault` runs once
   * a quarter of the messages is delivered and resolves when it is done, with the moment the fault
   * struck (performance.now(), after finding the leader) if it knows it. Returns what the checks
   * need.
   */
  async function run(tag: string, fault: () => Promise<number | void>) {
    setup = await new DataSource({
      type: 'postgres',
      url: cluster.url,
      poolSize: 2,
      connectTimeoutMS: 3_000,
    }).initialize();
    const prefix = uniqueTablePrefix(tag);
    await new SchemaManager(sqlClientFor(setup)).apply(SIMBA_TABLES.mutex, prefix, 'create');
    const ids = await seedInbox(
      setup,
      prefix,
      Array.from({ length: MESSAGES }, (_, i) => ({
        type: { namespace: 'crash', name: 'item' },
        payload: { i },
      })),
      'competing',
    );
    const ticks = join(dir, `${prefix}ticks.log`);
    writeFileSync(ticks, '');
    const grants: { pid: number; token: number; at: number }[] = [];
    const deliveries = new Map<string, { pid: number; at: number }[]>();
    workers = new Workers();
    const env = { HOLDFAST_TEST_PG_URL: cluster.url, SIMBA_WORKER_LOG_LEVELS: 'error,warn' };
    // A @Failover caller through the endpoint too: during the fault its calls must stay bounded.
    const calls: FailoverCall[] = [];
    const caller = startFailoverCaller(workers, 'postgres', prefix, STORE_TIMEOUT, env, calls);
    // The lockers: each type its own lock table and ticks file; what each process believes
    // (ticks) and what it reports (acquired / lost).
    const roles = new Map<number, string>();
    const lockers = Object.fromEntries(
      LOCKER_TYPES.map((type) => {
        const file = join(dir, `${prefix}${type}.ticks.log`);
        writeFileSync(file, '');
        return [type, { file, acquired: [] as { pid: number; at: number }[], lost: [] as string[] }];
      }),
    ) as Record<LockerType, { file: string; acquired: { pid: number; at: number }[]; lost: string[] }>;
    for (const type of LOCKER_TYPES) {
      for (let i = 0; i < LOCKERS; i++) {
        const child = workers.spawn(
          LOCKER_WORKER,
          [
            `${prefix}${type === 'database' ? 'db' : 'lease'}_`,
            type,
            lockers[type].file,
            String(LOCK_INTERVAL),
            String(LOCK_KEEP_ALIVE),
          ],
          env,
          (c, m) => {
            if (m.t === 'acquired') lockers[type].acquired.push({ pid: c.pid!, at: performance.now() });
            if (m.t === 'lost') lockers[type].lost.push(String(m.reason));
          },
        );
        roles.set(child.pid!, type);
      }
    }
    for (let i = 0; i < 3; i++) {
      const child = workers.spawn(
        CONTENDER,
        ['postgres', prefix, 'leader', ticks, '-', String(TTL), String(TRANSITION)],
        env,
        (c, m) => {
          if (m.type === 'acquired')
            grants.push({ pid: c.pid!, token: Number(m.token), at: performance.now() });
        },
      );
      roles.set(child.pid!, 'simba');
    }
    // Generous: on a loaded machine each worker's start (TypeScript and Nest) takes seconds.
    await until(() => grants[0], 60_000, 'a first owner');
    for (const type of LOCKER_TYPES)
      await until(() => lockers[type].acquired[0], 60_000, `a first ${type} locker master`);
    await caller;
    // Slow the workers a little (their handler waits 20 ms) so the fault lands during delivery.
    for (let i = 0; i < 3; i++) {
      const child = workers.spawn(
        INBOX_WORKER,
        ['postgres', prefix, String(VISIBILITY), 'competing', '', '2'],
        env,
        (c, m) => {
          if (m.t === 'delivered')
            deliveries.set(String(m.id), [
              ...(deliveries.get(String(m.id)) ?? []),
              { pid: c.pid!, at: performance.now() },
            ]);
        },
      );
      roles.set(child.pid!, 'inbox');
    }
    await until(() => deliveries.size >= MESSAGES / 4 || undefined, 120_000, 'a quarter delivered');
    const faultAt = performance.now();
    const grantsBefore = grants.length;
    // An owner dies with the fault: the Simba owner and both lockers' masters are SIGKILLed as
    // the fault starts, so the next owner of each is another process.
    const killed = [grants.at(-1)?.pid, ...LOCKER_TYPES.map((type) => lockers[type].acquired.at(-1)?.pid)];
    for (const pid of killed) workers.children.find((c) => c.pid === pid)?.kill('SIGKILL');
    const struckAt = (await fault()) ?? faultAt;
    const writableAt = await until(
      async () => ((await cluster.writable()) ? performance.now() : undefined),
      120_000,
      'a writable primary',
    );
    await until(
      () => (ids.every((id) => deliveries.has(id)) ? true : undefined),
      VISIBILITY + 10_000 + 30_000,
      'every message delivered',
    ).catch(() => undefined);
    const lastDelivery = Math.max(...[...deliveries.values()].map((d) => d[0].at));
    // A message held by a lost claim shows as a late delivery after a pause: the first deliveries
    // after the cluster is writable again, in order, and the longest pause between two of them.
    const firsts = [...deliveries.values()].map((d) => d[0].at).sort((a, b) => a - b);
    const afterWritable = firsts.filter((at) => at >= writableAt);
    let longestPauseAfterWritableMs = 0;
    for (let i = 0; i < afterWritable.length; i++)
      longestPauseAfterWritableMs = Math.max(
        longestPauseAfterWritableMs,
        afterWritable[i] - (i ? afterWritable[i - 1] : writableAt),
      );
    await until(
      () => grants[grantsBefore],
      3 * (TTL + TRANSITION) + 15_000,
      'an owner after the fault',
    ).catch(() => undefined);
    for (const type of LOCKER_TYPES)
      await until(
        () => lockers[type].acquired.find((a) => a.at >= struckAt),
        60_000,
        `a ${type} locker master after the fault`,
      ).catch(() => undefined);
    await sleep(TTL + TRANSITION);
    // The store breaker's probe closes it once the store answers again (every second).
    await until(
      () => calls.filter((c) => c.kind === 'down' && c.at > writableAt).some((c) => c.outcome === 'stale'),
      15_000,
      'the last good value from the store again',
    ).catch(() => undefined);
    const report = checkTicks(ticks);
    const lost = ids.filter((id) => !deliveries.has(id));
    const twice = [...deliveries.values()].filter((d) => d.length > 1).length;
    const lines = workers.output.filter((o) => o.at >= faultAt);
    const perProcess = new Map<number, number>();
    for (const l of lines.filter((o) => /\b(WARN|ERROR)\b/.test(o.line)))
      perProcess.set(l.pid, (perProcess.get(l.pid) ?? 0) + 1);
    // WARN/ERROR lines since the fault per process, by kind: "simba: 1,0,2".
    const linesPerProcess: Record<string, string> = {};
    const children = workers.children;
    for (const c of children) {
      const role = roles.get(c.pid!) ?? 'caller';
      linesPerProcess[role] = [linesPerProcess[role], perProcess.get(c.pid!) ?? 0]
        .filter((x) => x !== undefined)
        .join(',');
    }
    // Each locker: its takeover after the fault, its ticks, and who believes it is master now.
    const now = Date.now();
    const locker = Object.fromEntries(
      LOCKER_TYPES.map((type) => {
        const { file, acquired, lost } = lockers[type];
        const r = checkLockerTicks(file);
        const next = acquired.find((a) => a.at >= struckAt);
        const tickingNow = new Set(r.stretches.filter((s) => s.to >= now - 1_000).map((s) => s.pid)).size;
        return [
          type,
          {
            // From the moment the fault struck to the first master after it.
            takeoverMs: next ? Math.round(next.at - struckAt) : undefined,
            takeoverAfterWritableMs: next ? Math.round(next.at - writableAt) : undefined,
            acquisitions: acquired.length,
            lost,
            ticks: r.ticks,
            masters: r.masters,
            overlappingTicks: r.overlappingTicks,
            overlaps: r.overlaps,
            tickingNow,
            maxLinesPerProcess: Math.max(
              0,
              ...children.filter((c) => roles.get(c.pid!) === type).map((c) => perProcess.get(c.pid!) ?? 0),
            ),
          },
        ];
      }),
    ) as Record<
      LockerType,
      {
        takeoverMs?: number;
        takeoverAfterWritableMs?: number;
        acquisitions: number;
        lost: string[];
        ticks: number;
        masters: number;
        overlappingTicks: number;
        overlaps: string[];
        tickingNow: number;
        maxLinesPerProcess: number;
      }
    >;
    const after = grants.slice(grantsBefore);
    const summary = {
      lost: lost.length,
      twice,
      overlappingTicks: report.overlappingTicks,
      violations: report.violations,
      tokens: grants.map((g) => g.token),
      writableAfterMs: Math.round(writableAt - faultAt),
      struckAfterMs: Math.round(struckAt - faultAt),
      lastDeliveryAfterWritableMs: Math.round(lastDelivery - writableAt),
      deliveredDuringFault: firsts.filter((at) => at >= faultAt && at < writableAt).length,
      deliveredAfterWritable: afterWritable.length,
      longestPauseAfterWritableMs: Math.round(longestPauseAfterWritableMs),
      ownerAfterFaultMs: after.length ? Math.round(after[0].at - faultAt) : undefined,
      // The next owner is never a process killed at the fault.
      ownersAfterFaultKilled: [
        ...after.map((g) => g.pid),
        ...LOCKER_TYPES.flatMap((type) =>
          lockers[type].acquired.filter((a) => a.at >= struckAt).map((a) => a.pid),
        ),
      ].filter((pid) => killed.includes(pid)).length,
      errorLines: workers.errors(faultAt).map((e) => e.line),
      maxLinesPerProcess: Math.max(0, ...perProcess.values()),
      linesPerProcess,
      locker,
      failover: failoverSummary(calls, faultAt, writableAt),
    };
    console.log(
      `[patroni ${tag}] ${JSON.stringify({ ...summary, tokens: summary.tokens.length, errorLines: summary.errorLines.length })}\n` +
        lines.map((o) => `  ${o.pid}: ${o.line}`).join('\n'),
    );
    return summary;
  }

  function expectSafe(s: Awaited<ReturnType<typeof run>>): void {
    expect(s.violations).toEqual([]);
    expect(s.overlappingTicks).toBe(0);
    for (let i = 1; i < s.tokens.length; i++) expect(s.tokens[i]).toBeGreaterThan(s.tokens[i - 1]);
    expect(s.lost).toBe(0);
    expect(s.lastDeliveryAfterWritableMs).toBeLessThanOrEqual(VISIBILITY + 10_000);
    expect(s.errorLines).toEqual([]);
    expect(s.ownersAfterFaultKilled).toBe(0);
    // @Failover: no caller waited for the store past storeTimeout; every answer was the fresh
    // value, the last good value, or the upstream's own error; once writable, the last good value.
    expect(s.failover.duringFault).toBeGreaterThan(0);
    expect(s.failover.unexpected).toEqual([]);
    expect(s.failover.slowestMs).toBeLessThanOrEqual(STORE_TIMEOUT + CALL_SLACK);
    expect(s.failover.lastDown).toBe('stale (last good)');
    // Both database lockers: never two processes ticking as master at once, a master again after
    // the fault, exactly one master at the end.
    for (const type of LOCKER_TYPES) {
      expect({ type, overlaps: s.locker[type].overlaps }).toEqual({ type, overlaps: [] });
      expect(s.locker[type].overlappingTicks).toBe(0);
      expect(s.locker[type].takeoverMs).toBeDefined();
      expect({ type, tickingNow: s.locker[type].tickingNow }).toEqual({ type, tickingNow: 1 });
      // Few lines: an outage and its end, a demotion; not a line per failed attempt.
      expect(s.locker[type].maxLinesPerProcess).toBeLessThanOrEqual(LOCKER_MAX_LINES);
    }
  }

  it('switchover to the synchronous standby: one owner at a time, every message delivered, no ERROR line', async () => {
    const s = await run('pat_switch', () => cluster.switchover());
    expectSafe(s);
    await cluster.waitForMembers(3);
  }, 240_000);

  it('failover with asynchronous replicas (the leader node SIGKILLed): one owner at a time, every message delivered', async () => {
    await cluster.setSynchronous(false);
    const s = await run('pat_failover', async () => {
      const leader = await cluster.waitForLeader();
      const struckAt = performance.now();
      await leader.kill();
      return struckAt;
    });
    expectSafe(s);
  }, 240_000);

  it('fast failover (only PostgreSQL killed, primary_start_timeout 0): the grace holds, one owner at a time', async () => {
    // Patroni promotes a replica as soon as it sees the leader's PostgreSQL down, within Simba's
    // lease: the case where a lost grant could overlap without the grace.
    await cluster.patchConfig({ primary_start_timeout: 0 });
    const s = await run('pat_fast', async () => {
      const leader = await cluster.waitForLeader();
      const struckAt = performance.now();
      await leader.killPostgres();
      return struckAt;
    });
    expectSafe(s);
  }, 240_000);

  it('node cut (the leader silenced, not killed: etcd, its PostgreSQL and its REST API unanswered): one owner at a time, a new owner, nothing lost', async () => {
    // Patroni on the cut leader cannot renew its key: it demotes its PostgreSQL (retry_timeout),
    // HAProxy's checks of it time out and its sessions are shut, and a replica takes the key once
    // it expires (ttl 20 s). Meanwhile the clients' connections to the leader hear nothing.
    // The failover's SIGKILLed node stays dead: the leader and one replica remain.
    await cluster.waitForMembers(2);
    let cut: PatroniNode | undefined;
    let cutAt = '';
    try {
      const s = await run('pat_cut', async () => {
        cut = await cluster.waitForLeader();
        const struckAt = performance.now();
        cutAt = new Date().toISOString();
        cut.isolate();
        return struckAt;
      });
      // The premise: the cut leader's Patroni lost etcd and demoted its PostgreSQL by itself.
      const demoted = cut!
        .log()
        .split('\n')
        .filter((l) => l.includes('because DCS is not accessible'));
      console.log(
        `[patroni pat_cut] cut at ${cutAt}; the cut leader's Patroni:\n  ${demoted.slice(0, 3).join('\n  ')}`,
      );
      expect(demoted.length).toBeGreaterThan(0);
      expectSafe(s);
    } finally {
      cut?.reconnect();
    }
  }, 240_000);
});
