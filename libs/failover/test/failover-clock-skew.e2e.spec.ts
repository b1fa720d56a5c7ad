import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { sqlClientFor, type SqlClient, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  forkTs,
  testDatabases,
  uniqueTablePrefix,
  waitForExit,
  waitForMessage,
} from '@holdfast/testing';
import { DatabaseClock, failoverKey } from '@holdfast/failover/internal';
import type { DataSource } from 'typeorm';

const WORKER = join(__dirname, 'support/skewed-instance.worker.ts');
const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const HOUR = 3_600_000;

/** Starts an instance whose process clock is `skewHours` off (libfaketime when installed). */
function startInstance(db: string, prefix: string, skewHours: number): ChildProcess {
  const env = { ...process.env };
  if (existsSync(LIBFAKETIME)) {
    env.LD_PRELOAD = LIBFAKETIME;
    env.FAKETIME = `${skewHours > 0 ? '+' : ''}${skewHours}h`;
    env.FAKETIME_DONT_RESET = '1';
  } else {
    env.HOLDFAST_TEST_CLOCK_OFFSET_MS = String(skewHours * HOUR);
  }
  return forkTs(WORKER, [db, prefix], { env });
}

let nextId = 0;
async function ask<T>(child: ChildProcess, message: Record<string, unknown>): Promise<T> {
  const id = ++nextId;
  const reply = waitForMessage<{ id: number } & T>(child, (m) => m.id === id, 30_000);
  child.send({ id, ...message });
  return reply;
}
const call = (child: ChildProcess, key: string, up: boolean) =>
  ask<{ value?: { key: string; pid: number }; error?: string }>(child, { cmd: 'call', key, up });

// SQLite's clock is each process's own (the database is in-process): there is no shared clock
// to agree on, so this runs on the servers only.
const servers = testDatabases().filter((db) => db !== 'sqlite');

describe('DatabaseClock', () => {
  it('follows the database reading and the monotonic clock, not the process clock', async () => {
    let db = 1_000_000;
    const clock = new DatabaseClock(async () => db, 60_000);
    await clock.sync();
    expect(Math.abs(clock.now() - 1_000_000)).toBeLessThan(1_000);
    const realNow = Date.now;
    Date.now = () => realNow() + 5 * HOUR; // the process clock jumps
    try {
      expect(Math.abs(clock.now() - 1_000_000)).toBeLessThan(1_000);
    } finally {
      Date.now = realNow;
    }
    db = 2_000_000;
    clock.observe(db, DatabaseClock.monotonic(), DatabaseClock.monotonic());
    expect(Math.abs(clock.now() - 2_000_000)).toBeLessThan(1_000);
  });
});

const runOnServers = servers.length ? describe.each(servers) : () => () => undefined;

runOnServers('two instances with clocks 2 h apart [%s]', (db) => {
  let dataSource: DataSource;
  let sql: SqlClient;
  const prefix = uniqueTablePrefix('skew');
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    dataSource = await createTestDataSource(db);
    sql = sqlClientFor(dataSource);
  });

  afterAll(async () => {
    for (const child of children) {
      if (child.connected) child.disconnect();
      await waitForExit(child);
    }
    await sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}FAILOVER_STORE`)).catch(() => undefined);
    await dataSource.destroy();
  });

  const row = async (key: string) => {
    const p = (i: number) => sql.dialect.placeholder(i);
    const [found] = await sql.query<{ as_of: unknown; expire_on: unknown }>(
      statement(
        `SELECT AS_OF AS as_of, EXPIRE_ON AS expire_on FROM ${prefix}FAILOVER_STORE WHERE FAILOVER_NAME = ${p(1)} AND FAILOVER_KEY = ${p(2)}`,
        ['skew', failoverKey('skew', key)],
      ),
    );
    return {
      asOf: sql.dialect.readTimestamp(found.as_of).getTime(),
      expireOn: sql.dialect.readTimestamp(found.expire_on).getTime(),
    };
  };

  it('stamps with the database clock, and both serve and expire the same rows', async () => {
    const ahead = startInstance(db, prefix, +1);
    children.push(ahead);
    await waitForMessage(ahead, (m: { ready?: boolean }) => m.ready === true, 60_000);
    const behind = startInstance(db, prefix, -1);
    children.push(behind);
    await waitForMessage(behind, (m: { ready?: boolean }) => m.ready === true, 60_000);

    // The skew is real: the two processes' clocks are about two hours apart.
    const [a, b] = await Promise.all([
      ask<{ now: number }>(ahead, { cmd: 'clock' }),
      ask<{ now: number }>(behind, { cmd: 'clock' }),
    ]);
    expect(a.now - b.now).toBeGreaterThan(1.9 * HOUR);

    // Each stores an entry; the other serves it while its upstream is down.
    expect((await call(ahead, 'from-ahead', true)).value?.pid).toBe(ahead.pid);
    expect((await call(behind, 'from-behind', true)).value?.pid).toBe(behind.pid);
    expect((await call(behind, 'from-ahead', false)).value?.pid).toBe(ahead.pid);
    expect((await call(ahead, 'from-behind', false)).value?.pid).toBe(behind.pid);

    // AS_OF and EXPIRE_ON are on the database's clock, not on either process's.
    const dbNow = await sql.nowMillis();
    for (const key of ['from-ahead', 'from-behind']) {
      const stored = await row(key);
      expect(Math.abs(stored.asOf - dbNow)).toBeLessThan(10 * 60_000);
      expect(stored.expireOn - stored.asOf).toBe(3_000);
    }

    // Once the database clock passes EXPIRE_ON, neither serves either entry.
    const expireOn = Math.max((await row('from-ahead')).expireOn, (await row('from-behind')).expireOn);
    while ((await sql.nowMillis()) <= expireOn) await new Promise((r) => setTimeout(r, 200));
    expect((await call(behind, 'from-ahead', false)).error).toBe('upstream down');
    expect((await call(ahead, 'from-behind', false)).error).toBe('upstream down');
  }, 120_000);
});
