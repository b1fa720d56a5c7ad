/**
 * npm run bench -- locker [--rounds 10] [--db sqlite,postgres,mariadb] [--locker lease-database,database,shared-file,shared-file-mtime]
 *
 * Takeover time of @holdfast/locker with real processes: how long after the master is killed
 * (SIGKILL, no cleanup) or releases the lock (LockerService.stop(), the shutdown path) a standby
 * becomes master. Median and max over `rounds` handovers per locker and database, next to the
 * goals: after SIGKILL ≤ lease length + lockAcquireSleepInterval, after stop ≤ lockAcquireSleepInterval.
 * The ratio column is max / goal (≤ 1 meets the goal). Short intervals keep the run to a few minutes.
 */
import { monotonicMillis, sqlClientFor, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  tempSqliteFile,
  uniqueTablePrefix,
  type TestDatabase,
} from '@holdfast/testing';
import type { LockerKindOptions } from '@holdfast/locker';
import { LockQueryResolver } from '@holdfast/locker/internal';
import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LockerCluster } from '../test/locker/cluster';

const INTERVAL = 500;
const KEEP_ALIVE = 150;
const FILE_STALE = 2_000;

interface Row {
  locker: string;
  db: string;
  event: 'SIGKILL' | 'stop';
  times: number[];
  goal: number;
  goalText: string;
}

function arg(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1] : fallback;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : Math.round((s[m - 1] + s[m]) / 2);
};

async function measure(
  label: string,
  db: TestDatabase | undefined,
  locker: LockerKindOptions,
  rounds: number,
): Promise<{ kill: number[]; stop: number[] }> {
  const cluster = new LockerCluster();
  const base = {
    db,
    sqliteFile: db === 'sqlite' ? tempSqliteFile('locker-bench') : undefined,
    prefix: uniqueTablePrefix('lk_bench'),
    locker,
    interval: INTERVAL,
    keepAlive: KEEP_ALIVE,
    startup: 'background' as const,
  };
  let serial = 0;
  const spawn = () => cluster.spawn({ ...base, name: `w${serial++}` });
  const alive = new Set<string>();
  try {
    for (let i = 0; i < 3; i++) alive.add(spawn().name);
    await Promise.all([...alive].map((n) => cluster.next(n, 'ready', 60_000)));
    let master = (await cluster.firstAcquired([...alive], -Infinity, 60_000)).name;

    const stop: number[] = [];
    for (let r = 0; r < rounds; r++) {
      // A random pause, so the release does not line up with the standbys' polling phase.
      await pause(Math.random() * INTERVAL);
      const releasedAt = await cluster.release(master);
      const next = await cluster.firstAcquired(
        [...alive].filter((n) => n !== master),
        releasedAt,
      );
      stop.push(next.at - releasedAt);
      await cluster.rejoin(master);
      master = next.name;
    }

    const kill: number[] = [];
    for (let r = 0; r < rounds; r++) {
      // Two ready standbys before each kill, as in a real pair of spares.
      await pause(Math.random() * INTERVAL);
      const killedAt = await cluster.kill(master);
      alive.delete(master);
      const replacement = spawn().name;
      // The replacement, once booted, is a standby like the others and may be the one to take over.
      const next = await cluster.firstAcquired([...alive, replacement], killedAt);
      kill.push(next.at - killedAt);
      master = next.name;
      await cluster.next(replacement, 'ready', 60_000);
      alive.add(replacement);
    }
    process.stderr.write(`  ${label}: done\n`);
    return { kill, stop };
  } finally {
    await cluster.closeAll();
  }
}

/**
 * How long the database itself takes to free a SIGKILLed master's lock (the floor under the
 * database locker's takeover): one master process, killed; a probe in this process tries the
 * lock every 5 ms (SKIP LOCKED, or BEGIN IMMEDIATE on SQLite's companion file) and rolls back.
 */
async function measureServerRelease(db: TestDatabase, rounds: number): Promise<number[]> {
  const sqliteFile = db === 'sqlite' ? tempSqliteFile('locker-bench-probe') : undefined;
  const prefix = uniqueTablePrefix('lk_probe');
  const dataSource = await createTestDataSource(db, { sqliteFile, poolSize: 2 });
  const sql = sqlClientFor(dataSource);
  const queries = new LockQueryResolver(sql.dialect, prefix);
  const free = async (): Promise<boolean> => {
    if (db === 'sqlite') {
      const conn = new Database(`${sqliteFile}.holdfast-lock`, { timeout: 0 });
      try {
        conn.exec('BEGIN IMMEDIATE');
        conn.exec('ROLLBACK');
        return true;
      } catch {
        return false;
      } finally {
        conn.close();
      }
    }
    const lockRow = queries.lockRow('default');
    return sql.transaction(async (tx) => (await tx.query(statement(lockRow.sql, lockRow.params))).length > 0);
  };
  const times: number[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      const cluster = new LockerCluster();
      try {
        const name = `p${r}`;
        cluster.spawn({
          name,
          db,
          sqliteFile,
          prefix,
          locker: { type: 'database' },
          interval: INTERVAL,
          keepAlive: KEEP_ALIVE,
        });
        await cluster.next(name, 'acquired', 60_000);
        if (await free()) throw new Error('probe: the lock is free while the master holds it');
        await pause(Math.random() * KEEP_ALIVE);
        const killedAt = await cluster.kill(name);
        while (!(await free())) await pause(5);
        times.push(monotonicMillis() - killedAt);
      } finally {
        await cluster.closeAll();
      }
    }
  } finally {
    await sql.execute(statement(`DROP TABLE IF EXISTS ${queries.table}`)).catch(() => undefined);
    await dataSource.destroy();
  }
  return times;
}

export async function main(args: string[]): Promise<void> {
  const rounds = Number(arg(args, 'rounds', '10'));
  const dbs = arg(args, 'db', 'sqlite,postgres,mariadb').split(',') as TestDatabase[];
  const lockers = arg(args, 'locker', 'lease-database,database,shared-file,shared-file-mtime').split(',');
  const rows: Row[] = [];
  process.stderr.write(
    `locker takeover: ${rounds} handovers per row, lockAcquireSleepInterval ${INTERVAL} ms, ` +
      `lockKeepAlivePeriod ${KEEP_ALIVE} ms, shared-file stale ${FILE_STALE} ms\n`,
  );
  for (const type of lockers) {
    const file = type.startsWith('shared-file');
    const targets: (TestDatabase | undefined)[] = file ? [undefined] : dbs;
    for (const db of targets) {
      const directory = () => mkdtempSync(join(tmpdir(), 'locker-bench-'));
      // shared-file: the OS (fcntl) lock, freed by the kernel when its holder dies; shared-file-mtime:
      // the lock directory a standby takes once stale (the only shared-file lock before mode 'os').
      const locker: LockerKindOptions =
        type === 'shared-file'
          ? { type, directory: directory() }
          : type === 'shared-file-mtime'
            ? { type: 'shared-file', mode: 'mtime', directory: directory(), stale: FILE_STALE }
            : ({ type } as LockerKindOptions);
      const label = `${type}/${db ?? 'file'}`;
      const started = monotonicMillis();
      const { kill, stop } = await measure(label, db, locker, rounds);
      process.stderr.write(`  ${label}: ${Math.round((monotonicMillis() - started) / 1000)} s\n`);
      // The OS lock holds no lease: a killed holder's lock is free at once, so the goal is one interval.
      const lease = type === 'shared-file-mtime' ? FILE_STALE : type === 'shared-file' ? 0 : INTERVAL;
      const leaseText =
        type === 'shared-file-mtime'
          ? `stale ${FILE_STALE}`
          : type === 'shared-file'
            ? 'no lease'
            : `lease ${INTERVAL}`;
      rows.push({
        locker: type,
        db: db ?? '(file)',
        event: 'SIGKILL',
        times: kill,
        goal: lease + INTERVAL,
        goalText: `${leaseText} + interval ${INTERVAL}`,
      });
      rows.push({
        locker: type,
        db: db ?? '(file)',
        event: 'stop',
        times: stop,
        goal: INTERVAL,
        goalText: `interval ${INTERVAL}`,
      });
    }
  }
  if (lockers.includes('database')) {
    for (const db of dbs) {
      const times = await measureServerRelease(db, rounds);
      process.stderr.write(`  database/${db}: server release probe done\n`);
      rows.push({
        locker: 'database (lock freed by the server, probe)',
        db,
        event: 'SIGKILL',
        times,
        goal: INTERVAL,
        goalText: `(floor of the takeover; interval ${INTERVAL})`,
      });
    }
  }
  const header = ['locker', 'database', 'after', 'median ms', 'max ms', 'goal ms', 'goal', 'max/goal', 'met'];
  const body = rows.map((r) => {
    const max = Math.max(...r.times);
    return [
      r.locker,
      r.db,
      r.event,
      String(median(r.times)),
      String(max),
      String(r.goal),
      r.goalText,
      (max / r.goal).toFixed(2),
      max <= r.goal ? 'yes' : 'NO',
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const b of body) console.log(line(b));
  if (lockers.includes('shared-file')) {
    console.log(
      `\nshared-file (mode 'os'): an fcntl lock the kernel frees when its holder dies, so a standby takes a ` +
        `SIGKILLed master's lock at its next attempt (within one interval).`,
    );
  }
  if (lockers.includes('shared-file-mtime')) {
    console.log(
      `\nshared-file-mtime (mode 'mtime'): the lock file's mtime is kept in ms; a standby retries when the lock ` +
        `it saw turns stale, so a SIGKILLed master's lock is taken about stale ms after its last refresh.`,
    );
  }
  console.log(
    `\nBaseline: the goal of each row, from the configured intervals (SIGKILL: lease length + ` +
      `lockAcquireSleepInterval; stop: lockAcquireSleepInterval); max/goal ≤ 1 meets it.`,
  );
}
