/**
 * Holdfast on PostgreSQL under Patroni (#36): three nodes, one etcd, HAProxy in front; Simba
 * contenders and competing inbox workers, each its own process, all through the endpoint. A
 * switchover with `synchronous_mode` on, then a failover (the leader node SIGKILLed) with
 * asynchronous replicas, then a fast failover (only the leader's PostgreSQL killed,
 * `primary_start_timeout` 0). The cluster is started once (ports 26560-26568) and removed in afterAll.
 * Runs under `npm run test:cluster` (HOLDFAST_TEST_CLUSTERS=1); needs patroni, python3-etcd,
 * etcd-server and haproxy.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SchemaManager, sqlClientFor } from '@holdfast/core/kit';
import { PatroniCluster, uniqueTablePrefix } from '@holdfast/testing';
import { SIMBA_MUTEX_TABLE } from '@holdfast/simba/internal';
import { seedInbox } from '../inbox/support/seed-inbox';
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

describe('Holdfast on PostgreSQL under Patroni (3 nodes, etcd, HAProxy)', () => {
  const cluster = new PatroniCluster({ basePort: 26560, nodes: 3, synchronous: true });
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
   * Three contenders and three inbox workers through the endpoint; `fault` runs once a quarter of
   * the messages is delivered and resolves when it is done. Returns what the checks need.
   */
  async function run(tag: string, fault: () => Promise<void>) {
    setup = await new DataSource({
      type: 'postgres',
      url: cluster.url,
      poolSize: 2,
      connectTimeoutMS: 3_000,
    }).initialize();
    const prefix = uniqueTablePrefix(tag);
    await new SchemaManager(sqlClientFor(setup)).apply(SIMBA_MUTEX_TABLE, prefix, 'create');
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
    for (let i = 0; i < 3; i++) {
      workers.spawn(
        CONTENDER,
        ['postgres', prefix, 'leader', ticks, '-', String(TTL), String(TRANSITION)],
        env,
        (c, m) => {
          if (m.type === 'acquired')
            grants.push({ pid: c.pid!, token: Number(m.token), at: performance.now() });
        },
      );
    }
    // Generous: on a loaded machine each worker's start (TypeScript and Nest) takes seconds.
    await until(() => grants[0], 60_000, 'a first owner');
    await caller;
    // Slow the workers a little (their handler waits 20 ms) so the fault lands during delivery.
    for (let i = 0; i < 3; i++) {
      workers.spawn(
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
    }
    await until(() => deliveries.size >= MESSAGES / 4 || undefined, 120_000, 'a quarter delivered');
    const faultAt = performance.now();
    const grantsBefore = grants.length;
    await fault();
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
    const after = grants.slice(grantsBefore);
    const summary = {
      lost: lost.length,
      twice,
      overlappingTicks: report.overlappingTicks,
      violations: report.violations,
      tokens: grants.map((g) => g.token),
      writableAfterMs: Math.round(writableAt - faultAt),
      lastDeliveryAfterWritableMs: Math.round(lastDelivery - writableAt),
      deliveredDuringFault: firsts.filter((at) => at >= faultAt && at < writableAt).length,
      deliveredAfterWritable: afterWritable.length,
      longestPauseAfterWritableMs: Math.round(longestPauseAfterWritableMs),
      ownerAfterFaultMs: after.length ? Math.round(after[0].at - faultAt) : undefined,
      errorLines: workers.errors(faultAt).map((e) => e.line),
      maxLinesPerProcess: Math.max(0, ...perProcess.values()),
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
    // @Failover: no caller waited for the store past storeTimeout; every answer was the fresh
    // value, the last good value, or the upstream's own error; once writable, the last good value.
    expect(s.failover.duringFault).toBeGreaterThan(0);
    expect(s.failover.unexpected).toEqual([]);
    expect(s.failover.slowestMs).toBeLessThanOrEqual(STORE_TIMEOUT + CALL_SLACK);
    expect(s.failover.lastDown).toBe('stale (last good)');
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
      await leader.kill();
    });
    expectSafe(s);
  }, 240_000);

  it('fast failover (only PostgreSQL killed, primary_start_timeout 0): the grace holds, one owner at a time', async () => {
    // Patroni promotes a replica as soon as it sees the leader's PostgreSQL down, within Simba's
    // lease: the case where a lost grant could overlap without the grace.
    await cluster.patchConfig({ primary_start_timeout: 0 });
    const s = await run('pat_fast', async () => {
      const leader = await cluster.waitForLeader();
      await leader.killPostgres();
    });
    expectSafe(s);
  }, 240_000);
});
