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
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { SchemaManager, sqlClientFor } from '@holdfast/core/kit';
import { uniqueTablePrefix } from '@holdfast/testing';
import { LossyFailoverRig } from './support/lossy-failover';
import { CONTENDER, checkTicks, sleep, until } from './support/processes';
import { SIMBA_TABLES } from '@holdfast/simba';

const PRIMARY = 26520;
const STANDBY = 26521;
/** Replication 26522; the first of four endpoints, one per contender process (26523-26526). */
const PORTS = { primary: PRIMARY, standby: STANDBY, replication: 26522, endpoint: 26523 };
const TTL = 2_000;
const TRANSITION = 1_000;
const MUTEX = 'grace';

interface Grant {
  pid: number;
  token: number;
  at: number;
}

describe('Simba after a lossy PostgreSQL failover (asynchronous standby, promoted at once)', () => {
  const rig = new LossyFailoverRig(PORTS, 'grace');

  afterAll(() => rig.stop(), 120_000);

  it('grants nothing while the lost grant may be believed: 0 ticks of a superseded owner', async () => {
    const { primary, standby } = await rig.start();
    const prefix = uniqueTablePrefix('grace');
    const table = `${prefix}simba_mutex`;
    await new SchemaManager(sqlClientFor(primary)).apply(SIMBA_TABLES.mutex, prefix, 'create');
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

    const ticks = join(rig.dir, `${prefix}ticks.log`);
    writeFileSync(ticks, '');
    const grants: Grant[] = [];
    const spawn = (target: number): Promise<ChildProcess> =>
      rig.spawn(
        target,
        CONTENDER,
        ['postgres', prefix, MUTEX, ticks, '-', String(TTL), String(TRANSITION)],
        { SIMBA_WORKER_LOG_LEVELS: 'error,warn' },
        (c, m) => {
          if (m.type === 'acquired')
            grants.push({ pid: c.pid!, token: Number(m.token), at: performance.now() });
        },
      );
    const contenders = [await spawn(PRIMARY), await spawn(PRIMARY), await spawn(PRIMARY)];
    const first = await until(() => grants[0], 30_000, 'a first owner');
    await until(
      async () => (await rowOn(standby)).owner_id?.trim() === `worker-${first.pid}`,
      20_000,
      'the first grant on the standby',
    );

    // 1. Replication goes quiet. 2. The owner is killed; another takes over on the primary only.
    rig.cluster.replication.blackhole();
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
    const timelineBefore = await rig.timeline(primary);
    const grantsBefore = grants.length;
    await rig.cluster.crashPrimary();
    rig.switchEndpoints((pid) => (pid === second.pid ? PRIMARY : STANDBY));
    await rig.cluster.promoteStandby();
    const promotedAt = performance.now();
    const timelineAfter = await rig.timeline(standby);
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
      throw new Error(`${row}; ` + `${error.message}; the contenders said:\n${rig.said()}`);
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
        rig.said(promotedAt - 2_000),
    );
    expect(timelineAfter).toBeGreaterThan(timelineBefore);
    expect(report.violations).toEqual([]);
    expect(superseded).toBe(0);
    const tokens = grants.map((g) => g.token);
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
  }, 180_000);
});
