/**
 * No grant during a lost lease (#36 item 4): a private PostgreSQL primary with an asynchronous
 * hot standby; the standby misses the last grant of a mutex; the primary crashes right after the
 * lost owner's renewal and the standby is promoted at once. The owner whose grant was lost still
 * believes it owns until its local deadline; nobody else may own before then. Contenders log a
 * tick every 20 ms while they believe they own, and the test counts the ticks of a superseded
 * owner. Two contenders run through it all, and one more starts right after the promotion (a
 * process that never saw the old timeline). Ports 26520-26523; needs the PostgreSQL server binaries.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SchemaManager, sqlClientFor } from '@holdfast/core/kit';
import { uniqueTablePrefix } from '@holdfast/testing';
import { SIMBA_MUTEX_TABLE } from '@holdfast/simba/internal';
import { PgReplicaPair } from '../simba/support/pg-cluster';
import { SwitchableProxy } from '../simba/support/switchable-proxy';
import { CONTENDER, Workers, checkTicks, sleep, until } from './support/processes';

const PRIMARY = 26520;
const STANDBY = 26521;
const REPLICATION = 26522;
/** The first of four endpoints, one per contender process (26523-26526). */
const ENDPOINT = 26523;
const TTL = 2_000;
const TRANSITION = 1_000;
const MUTEX = 'grace';
const TIMELINE = `SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint AS timeline`;

function connect(port: number): Promise<DataSource> {
  return new DataSource({
    type: 'postgres',
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    poolSize: 2,
    connectTimeoutMS: 3_000,
  }).initialize();
}

interface Grant {
  pid: number;
  token: number;
  at: number;
}

describe('Simba after a lossy PostgreSQL failover (asynchronous standby, promoted at once)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'holdfast-grace-test-'));
  let cluster: PgReplicaPair | undefined;
  const endpoints = new Map<number, SwitchableProxy>();
  let workers: Workers | undefined;
  const open: DataSource[] = [];

  afterAll(async () => {
    await workers?.stop();
    await Promise.all(open.splice(0).map((d) => d.destroy().catch(() => undefined)));
    for (const e of endpoints.values()) await e.stop();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it('grants nothing while the lost grant may be believed: 0 ticks of a superseded owner', async () => {
    cluster = new PgReplicaPair(PRIMARY, STANDBY, REPLICATION, false);
    await cluster.start();
    const prefix = uniqueTablePrefix('grace');
    const table = `${prefix}simba_mutex`;
    const primary = await connect(PRIMARY);
    const standby = await connect(STANDBY);
    open.push(primary, standby);
    await new SchemaManager(sqlClientFor(primary)).apply(SIMBA_MUTEX_TABLE, prefix, 'create');
    await until(
      async () => (await standby.query(`SELECT 1 FROM pg_tables WHERE tablename = $1`, [table])).length > 0,
      20_000,
      'the table on the standby',
    );
    const rowOn = async (db: DataSource) =>
      ((await db.query(`SELECT owner_id, acquired_at FROM ${table} WHERE mutex = $1`, [MUTEX]))[0] ?? {}) as {
        owner_id?: string;
        acquired_at?: string;
      };

    const ticks = join(dir, `${prefix}ticks.log`);
    writeFileSync(ticks, '');
    const grants: Grant[] = [];
    workers = new Workers();
    // Each process reaches the database through an endpoint of its own, so that at the failover
    // the lost grant's owner can be left cut off from the new primary (a partition, or a slow
    // reconnect) while the others are moved to it.
    const spawn = async (target: number): Promise<ChildProcess> => {
      const endpoint = new SwitchableProxy(target);
      const port = await endpoint.start(ENDPOINT + endpoints.size);
      const child = workers!.spawn(
        CONTENDER,
        ['postgres', prefix, MUTEX, ticks, '-', String(TTL), String(TRANSITION)],
        {
          HOLDFAST_TEST_PG_URL: `postgres://postgres@127.0.0.1:${port}/postgres`,
          SIMBA_WORKER_LOG_LEVELS: 'error,warn',
        },
        (c, m) => {
          if (m.type === 'acquired')
            grants.push({ pid: c.pid!, token: Number(m.token), at: performance.now() });
        },
      );
      endpoints.set(child.pid!, endpoint);
      return child;
    };
    const contenders = [await spawn(PRIMARY), await spawn(PRIMARY), await spawn(PRIMARY)];
    const first = await until(() => grants[0], 30_000, 'a first owner');
    await until(
      async () => (await rowOn(standby)).owner_id?.trim() === `worker-${first.pid}`,
      20_000,
      'the first grant on the standby',
    );

    // 1. Replication goes quiet. 2. The owner is killed; another takes over on the primary only.
    cluster.replication.blackhole();
    contenders.find((c) => c.pid === first.pid)!.kill('SIGKILL');
    const second = await until(
      () => grants.find((g) => g.pid !== first.pid),
      TTL + TRANSITION + 10_000,
      'a takeover',
    );
    expect((await rowOn(standby)).owner_id?.trim()).toBe(`worker-${first.pid}`); // the grant is lost

    // 3. Right after one of its renewals (its lease is as long as it gets), the primary crashes and
    //    the standby is promoted at once. Every endpoint moves to it but the lost grant's owner's,
    //    which points at the dead primary: that owner cannot renew and believes it owns until its
    //    local deadline.
    const renewedFrom = (await rowOn(primary)).acquired_at;
    await until(
      async () => (await rowOn(primary)).acquired_at !== renewedFrom,
      TTL + TRANSITION + 5_000,
      'a renewal of the second owner',
    );
    const timelineBefore = Number((await primary.query(TIMELINE))[0].timeline);
    const grantsBefore = grants.length;
    await cluster.crashPrimary();
    for (const [pid, endpoint] of endpoints) endpoint.switchTo(pid === second.pid ? PRIMARY : STANDBY);
    await cluster.promoteStandby();
    const promotedAt = performance.now();
    const timelineAfter = Number((await standby.query(TIMELINE))[0].timeline);
    // 4. A contender that never saw the old timeline starts right after the promotion.
    const fresh = await spawn(STANDBY);
    const third = await until(
      () => grants.slice(grantsBefore)[0],
      3 * (TTL + TRANSITION) + 15_000,
      'a grant on the promoted standby',
    ).catch(async (error: Error) => {
      const row = JSON.stringify(
        await standby.query(`SELECT * FROM ${table}`).catch((e: Error) => e.message),
      );
      throw new Error(
        `${row}; ` +
          `${error.message}; the contenders said:\n${workers!.output.map((o) => `  ${o.pid}: ${o.line}`).join('\n')}`,
      );
    });
    await sleep(TTL + TRANSITION);

    const report = checkTicks(ticks);
    const superseded = report.overlappingTicks;
    console.log(
      `[pg grace] timeline ${timelineBefore} -> ${timelineAfter}; grants ${grants
        .map((g) => `${g.token}@${g.pid === fresh.pid ? 'fresh' : g.pid}`)
        .join(', ')}; lost-grant owner ${second.pid}; first grant after the promotion ${Math.round(
        third.at - promotedAt,
      )} ms after it (by ${third.pid === fresh.pid ? 'the fresh process' : third.pid}); ${report.ticks} ticks, ` +
        `${superseded} of a superseded owner; violations ${report.violations.length}\n` +
        workers.output
          .filter((o) => o.at >= promotedAt - 2_000)
          .map((o) => `  ${o.pid}: ${o.line}`)
          .join('\n'),
    );
    expect(timelineAfter).toBeGreaterThan(timelineBefore);
    expect(report.violations).toEqual([]);
    expect(superseded).toBe(0);
    const tokens = grants.map((g) => g.token);
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
  }, 180_000);
});
