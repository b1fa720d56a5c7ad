/**
 * Simba at scale (#17): two processes contend for the same 1,000 mutexes (100 on SQLite),
 * ttl 2 s, transition 1 s. Statements are read from the server's own counters: PostgreSQL's
 * pg_stat_database (the test database: run this suite alone), MariaDB's `Questions` on a private
 * server (port 25462), since the shared server counts everyone's statements.
 */
import { testDatabases, type TestDatabase } from '@holdfast/testing';
import { PrivateMariaDb } from './support/private-mariadb';
import { runScale } from './support/scale-run';

const TTL = 2_000;
const TRANSITION = 1_000;
const MARIADB_PORT = 25462;

describe.each(testDatabases().map((db) => [db]))('simba at scale [%s]', (db: TestDatabase) => {
  const mutexes = db === 'sqlite' ? 100 : 1_000;
  let maria: PrivateMariaDb | undefined;

  beforeAll(async () => {
    if (db !== 'mariadb') return;
    maria = new PrivateMariaDb(MARIADB_PORT);
    await maria.start();
  }, 120_000);
  afterAll(async () => {
    await maria?.stop();
  }, 60_000);

  it(`2 processes x ${mutexes} mutexes: all owned, never two owners, takeover after SIGKILL within the bound, few statements`, async () => {
    const result = await runScale({
      db,
      mutexes,
      ttl: TTL,
      transition: TRANSITION,
      standbyPoll: 500,
      measureMs: 10_000,
      url: maria?.url,
    });
    console.log(
      `${db} ${mutexes} mutexes x 2 processes: all owned after ${Math.round(result.allOwnedMs)} ms; ` +
        `${result.statementsPerSecond?.toFixed(1) ?? 'n/a'} statements/s ` +
        `(${result.perMutexPerSecond?.toFixed(4) ?? 'n/a'} per mutex per s); ` +
        `CPU ${result.cpuPercent.map((c) => `${c.toFixed(1)}%`).join(' / ')}; ` +
        `takeover of ${result.killedOwned} after SIGKILL in ${Math.round(result.takeoverMs)} ms\n` +
        result.output.slice(0, 20).join('\n'),
    );
    expect(result.overlaps.slice(0, 5)).toEqual([]);
    expect(result.killedOwned).toBeGreaterThan(0);
    // Bounds with room for a busy machine: the goals are ttl + transition for all owned,
    // ttl + transition + 1 s for the takeover, 0.25 statements per mutex per second.
    expect(result.allOwnedMs).toBeLessThan(TTL + TRANSITION + 5_000);
    expect(result.takeoverMs).toBeLessThan(TTL + TRANSITION + 1_000 + 5_000);
    if (result.perMutexPerSecond !== undefined) expect(result.perMutexPerSecond).toBeLessThanOrEqual(0.25);
    for (const cpu of result.cpuPercent) expect(cpu).toBeLessThan(50);
    expect(result.output.filter((l) => /\bERROR\b/.test(l))).toEqual([]);
  }, 240_000);
});
