/**
 * The lease locker's grace after a lossy failover (#36 item 4): a private PostgreSQL primary with
 * an asynchronous hot standby; the standby misses the last lease take; the primary crashes right
 * after the new master's renewal and the standby is promoted at once. The master whose take was
 * lost still believes it is master until its local deadline; nobody else may be master before
 * then. Each locker process (workers/locker-ticker.worker.ts) ticks every 20 ms while it believes
 * it is master, and the test measures the time two processes believed it at once. Three processes share the lock (the first
 * master is killed, the second takes the lease on the primary only, the third waits as standby
 * and reaches the standby server before the crash, so it tries again within a quarter lease of
 * the promotion), and a fourth starts right after the promotion (a process that never saw the
 * old timeline). On the old code the third took the lease about a second after the promotion,
 * while the lost take's master believed it was master for seconds more. Ports 27200-27206; needs
 * the PostgreSQL server binaries.
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { uniqueTablePrefix } from '@holdfast/testing';
import { LOCKER_WORKER, checkLockerTicks } from './support/locker-ticks';
import { LossyFailoverRig } from './support/lossy-failover';
import { sleep, until } from './support/processes';

const PRIMARY = 27200;
const STANDBY = 27201;
/** Replication 27202; the first of four endpoints, one per locker process (27203-27206). */
const PORTS = { primary: PRIMARY, standby: STANDBY, replication: 27202, endpoint: 27203 };
/** lockAcquireSleepInterval, the lease. */
const LEASE = 6_000;
const KEEP_ALIVE = 1_500;
interface Event {
  pid: number;
  /** performance.now() when the message came. */
  at: number;
}

/** How long two processes believed at once that they were master (stretches of ticks overlapping). */
function overlapMs(stretches: { pid: number; from: number; to: number }[]): number {
  let total = 0;
  for (let i = 0; i < stretches.length; i++)
    for (let j = i + 1; j < stretches.length; j++)
      if (stretches[i].pid !== stretches[j].pid)
        total += Math.max(
          0,
          Math.min(stretches[i].to, stretches[j].to) - Math.max(stretches[i].from, stretches[j].from),
        );
  return total;
}

describe('the lease locker after a lossy PostgreSQL failover (asynchronous standby, promoted at once)', () => {
  const rig = new LossyFailoverRig(PORTS, 'lease-grace');

  afterAll(() => rig.stop(), 120_000);

  it('no lease is taken while the lost take may be believed: 0 ms with two masters', async () => {
    const { primary, standby } = await rig.start();
    const prefix = uniqueTablePrefix('lgrace');
    const table = `${prefix}HOLDFAST_LOCK`;
    const rowOn = async (db: DataSource) =>
      ((await db.query(`SELECT BROKER_NAME AS holder, TIME AS time FROM ${table} WHERE ID = 'default'`))[0] ??
        {}) as { holder?: string; time?: string };

    const ticks = join(rig.dir, `${prefix}ticks.log`);
    writeFileSync(ticks, '');
    const takes: Event[] = [];
    const losses: Event[] = [];
    // Each process reaches the database through an endpoint of its own, so that at the failover
    // the lost take's master can be left cut off from the new primary (a partition, or a slow
    // reconnect) while the others are moved to it.
    const spawn = (target: number): Promise<ChildProcess> =>
      rig.spawn(
        target,
        LOCKER_WORKER,
        [prefix, 'lease-database', ticks, String(LEASE), String(KEEP_ALIVE)],
        {},
        (c, m) => {
          if (m.t === 'acquired') takes.push({ pid: c.pid!, at: performance.now() });
          if (m.t === 'lost') losses.push({ pid: c.pid!, at: performance.now() });
        },
      );
    const lockers = [await spawn(PRIMARY), await spawn(PRIMARY), await spawn(PRIMARY)];
    const first = await until(() => takes[0], 60_000, 'a first master');
    const firstHolder = await until(async () => (await rowOn(primary)).holder, 20_000, 'its row');
    await until(
      async () => (await rowOn(standby)).holder === firstHolder,
      20_000,
      'the first take on the standby',
    );

    // 1. Replication goes quiet. 2. The master is killed; another takes the lease on the primary only.
    rig.cluster.replication.blackhole();
    lockers.find((c) => c.pid === first.pid)!.kill('SIGKILL');
    const second = await until(
      () => takes.find((t) => t.pid !== first.pid),
      3 * LEASE + 10_000,
      'a takeover',
    );
    await until(async () => (await rowOn(primary)).holder !== firstHolder, 10_000, 'the take in its row');
    expect((await rowOn(standby)).holder).toBe(firstHolder); // the take is lost

    // 3. The standby's endpoint already points at the standby server (a virtual IP moved early, or
    //    a stale DNS answer): its attempts fail there (read-only), so it retries every quarter
    //    lease, as a standby does while its database does not answer. 4. Right after one of the
    //    master's renewals (its lease is as long as it gets), the primary crashes and the standby
    //    server is promoted at once. The lost take's master still points at the dead primary: it
    //    cannot renew and believes it is master until its local deadline.
    rig.switchEndpoints((pid) => (pid === second.pid ? PRIMARY : STANDBY));
    const renewedFrom = (await rowOn(primary)).time;
    await until(async () => (await rowOn(primary)).time !== renewedFrom, LEASE + 5_000, 'a renewal');
    const timelineBefore = await rig.timeline(primary);
    const takesBefore = takes.length;
    await rig.cluster.crashPrimary();
    await rig.cluster.promoteStandby();
    const promotedAt = performance.now();
    const timelineAfter = await rig.timeline(standby);
    // 5. A locker that never saw the old timeline starts right after the promotion.
    const fresh = await spawn(STANDBY);
    const third = await until(
      () => takes.slice(takesBefore)[0],
      4 * LEASE + 20_000,
      'a take on the promoted standby',
    ).catch(async (error: Error) => {
      const rows = JSON.stringify(
        await standby.query(`SELECT * FROM ${table}`).catch((e: Error) => e.message),
      );
      throw new Error(`${rows}; ${error.message}; the lockers said:\n${rig.said()}`);
    });
    // The lost take's master demotes at its local deadline (before the take above, unless two
    // believed at once); the ticks until then are counted.
    const demoted = await until(
      () => losses.find((l) => l.pid === second.pid),
      LEASE + 10_000,
      "the demotion of the lost take's master",
    );
    await sleep(500);

    const report = checkLockerTicks(ticks);
    const overlap = overlapMs(report.stretches);
    const name = (pid: number) =>
      pid === fresh.pid
        ? 'fresh'
        : pid === second.pid
          ? 'lost-take'
          : pid === first.pid
            ? 'first'
            : 'standby';
    console.log(
      `[lease grace] timeline ${timelineBefore} -> ${timelineAfter}; takes ${takes
        .map((t) => `${name(t.pid)}@${Math.round(t.at - promotedAt)}`)
        .join(
          ', ',
        )} (ms from the promotion); first take after the promotion ${Math.round(third.at - promotedAt)} ms ` +
        `after it (by ${name(third.pid)}; lease ${LEASE} ms); the lost take's master demoted ` +
        `${Math.round(demoted.at - promotedAt)} ms after it; ${report.ticks} ticks of ${report.masters} masters, ` +
        `${report.overlappingTicks} ticks and ${overlap} ms with two masters ${report.overlaps.join('; ')}`,
    );
    expect(timelineAfter).toBeGreaterThan(timelineBefore);
    expect(report.overlappingTicks).toBe(0);
    expect(overlap).toBe(0);
    // Only the lost take's master and the others: the grace ends, a master comes back.
    expect(third.pid).not.toBe(second.pid);
  }, 180_000);
});
