import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SchemaManager, sqlClientFor } from '@holdfast/core/kit';
import {
  forkTs,
  tempSqliteFile,
  testDataSourceOptions,
  uniqueTablePrefix,
  waitForExit,
  type TestDatabase,
} from '@holdfast/testing';
import { SIMBA_TABLES } from '@holdfast/simba';

const WORKER = join(__dirname, '..', 'workers', 'scale.worker.ts');

export interface ScaleOptions {
  db: TestDatabase;
  /** Mutexes each of the two processes contends for (the same ones). */
  mutexes: number;
  ttl: number;
  transition: number;
  standbyPoll: number;
  /** How long the steady state is measured (statements and CPU). */
  measureMs: number;
  /** postgres/mariadb: the database URL (default: the test database of HOLDFAST_TEST_*_URL). */
  url?: string;
}

export interface ScaleResult {
  /** From the processes' start until every mutex has an owner. */
  allOwnedMs: number;
  /** Statements per second the server counted in the steady state (undefined on SQLite). */
  statementsPerSecond?: number;
  perMutexPerSecond?: number;
  /** CPU of each process in the steady state, % of one core. */
  cpuPercent: number[];
  /** From the SIGKILL of the process that owned most until the survivor owns every mutex. */
  takeoverMs: number;
  /** Mutexes the killed process owned. */
  killedOwned: number;
  /** Two processes owning one mutex at the same time (must stay empty). */
  overlaps: string[];
  /** Lines the processes wrote (warnings, errors). */
  output: string[];
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function until(probe: () => boolean, ms: number, what: string): Promise<void> {
  const end = performance.now() + ms;
  while (!probe()) {
    if (performance.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * The server's own statement counter: PostgreSQL counts transactions per database
 * (`pg_stat_database` xact_commit + xact_rollback), MariaDB statements per server (`Questions`
 * in `SHOW GLOBAL STATUS`, so use a server of your own). Undefined on SQLite.
 */
async function serverCounter(db: TestDatabase, dataSource: DataSource): Promise<number | undefined> {
  if (db === 'postgres') {
    await dataSource.query('SELECT pg_stat_clear_snapshot()');
    const [row] = await dataSource.query(
      'SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()',
    );
    return Number(row.n);
  }
  if (db === 'mariadb') {
    const [row] = await dataSource.query("SHOW GLOBAL STATUS LIKE 'Questions'");
    return Number(row.Value ?? row.value);
  }
  return undefined;
}

class ScaleWorker {
  readonly owned = new Set<number>();
  /** Per mutex: [start, end] of each ownership, in epoch ms. */
  readonly intervals = new Map<number, [number, number][]>();
  readyAt = 0;
  private cpuWaiters: ((v: { user: number; system: number; wall: number }) => void)[] = [];

  constructor(
    readonly child: ChildProcess,
    output: string[],
  ) {
    child.on('message', (m: { type: string; events?: [string, number, number][]; user?: number }) => {
      if (m.type === 'ready') this.readyAt = performance.now();
      if (m.type === 'cpu') this.cpuWaiters.shift()?.(m as never);
      for (const [kind, i, at] of m.events ?? []) {
        const list = this.intervals.get(i) ?? [];
        if (kind === 'a') {
          this.owned.add(i);
          list.push([at, Infinity]);
        } else {
          this.owned.delete(i);
          if (list.length) list[list.length - 1][1] = at;
        }
        this.intervals.set(i, list);
      }
    });
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding('utf8');
      stream?.on('data', (text: string) => output.push(...text.split('\n').filter(Boolean)));
    }
  }

  cpu(): Promise<{ user: number; system: number; wall: number }> {
    return new Promise((resolve) => {
      this.cpuWaiters.push(resolve);
      this.child.send({ type: 'cpu' });
    });
  }

  /** After a SIGKILL: its ownerships end at `at`. */
  closeAt(at: number): void {
    for (const list of this.intervals.values()) for (const i of list) if (i[1] === Infinity) i[1] = at;
    this.owned.clear();
  }
}

/**
 * Two processes contend for the same `mutexes` mutexes; measures how long until all are owned,
 * the statements the server counts and the CPU each process uses in the steady state, and the
 * takeover after a SIGKILL of the process that owns most. Checks that no mutex ever had two
 * owners at once (from the processes' acquired/released callbacks).
 */
export async function runScale(o: ScaleOptions): Promise<ScaleResult> {
  const prefix = uniqueTablePrefix(`scale_${o.db}`);
  const sqliteFile = o.db === 'sqlite' ? tempSqliteFile('simba-scale') : undefined;
  const base = testDataSourceOptions(o.db, { sqliteFile, poolSize: 2 });
  const dataSource = await new DataSource({
    ...base,
    ...(o.url ? { url: o.url } : {}),
  } as never).initialize();
  await new SchemaManager(sqlClientFor(dataSource)).apply(SIMBA_TABLES.mutex, prefix, 'create');
  const output: string[] = [];
  const env = {
    ...process.env,
    NO_COLOR: '1',
    ...(o.url && o.db === 'postgres' ? { HOLDFAST_TEST_PG_URL: o.url } : {}),
    ...(o.url && o.db === 'mariadb' ? { HOLDFAST_TEST_MARIADB_URL: o.url } : {}),
  };
  const args = [
    o.db,
    prefix,
    String(o.mutexes),
    sqliteFile ?? '-',
    String(o.ttl),
    String(o.transition),
    String(o.standbyPoll),
  ];
  const workers = [0, 1].map(
    () => new ScaleWorker(forkTs(WORKER, args, { env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] }), output),
  );
  try {
    await until(() => workers.every((w) => w.readyAt > 0), 60_000, 'both processes ready');
    const startedAt = Math.min(...workers.map((w) => w.readyAt));
    const ownedCount = () => new Set(workers.flatMap((w) => [...w.owned])).size;
    await until(() => ownedCount() === o.mutexes, 60_000, `all ${o.mutexes} mutexes owned`);
    const allOwnedMs = performance.now() - startedAt;

    // Steady state: what the database and the processes spend.
    await sleep(o.ttl + o.transition);
    await Promise.all(workers.map((w) => w.cpu()));
    const c0 = await serverCounter(o.db, dataSource);
    const t0 = performance.now();
    await sleep(o.measureMs);
    const c1 = await serverCounter(o.db, dataSource);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = await Promise.all(workers.map((w) => w.cpu()));
    const statementsPerSecond = c0 === undefined || c1 === undefined ? undefined : (c1 - c0) / seconds;

    // Takeover after a crash of the process that owns most.
    const [victim, survivor] = [...workers].sort((a, b) => b.owned.size - a.owned.size);
    const killedOwned = victim.owned.size;
    victim.child.kill('SIGKILL');
    const killedAt = Date.now();
    const killedPerf = performance.now();
    await waitForExit(victim.child, 5_000);
    victim.closeAt(killedAt);
    await until(
      () => survivor.owned.size === o.mutexes,
      o.ttl + o.transition + 30_000,
      `the survivor owns all ${o.mutexes}`,
    );
    const takeoverMs = performance.now() - killedPerf;

    const overlaps: string[] = [];
    for (let i = 0; i < o.mutexes; i++) {
      for (const [s1, e1] of workers[0].intervals.get(i) ?? []) {
        for (const [s2, e2] of workers[1].intervals.get(i) ?? []) {
          if (Math.max(s1, s2) < Math.min(e1, e2))
            overlaps.push(`mutex ${i}: [${s1}, ${e1}] and [${s2}, ${e2}]`);
        }
      }
    }
    return {
      allOwnedMs,
      statementsPerSecond,
      perMutexPerSecond: statementsPerSecond === undefined ? undefined : statementsPerSecond / o.mutexes,
      cpuPercent: cpu.map((c) => ((c.user + c.system) / c.wall) * 100),
      takeoverMs,
      killedOwned,
      overlaps,
      output,
    };
  } finally {
    for (const w of workers) w.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => waitForExit(w.child, 5_000)));
    await dataSource.query(`DROP TABLE IF EXISTS ${prefix}simba_mutex`).catch(() => undefined);
    await dataSource.destroy();
  }
}
