/** Small helpers shared by the benchmarks: timing loops, medians and a printed table. */
import { readdirSync, readFileSync } from 'node:fs';
import { statement, type SqlClient } from '@holdfast/core/kit';

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Runs `op` from `concurrency` workers for `ms` milliseconds, numbering calls from `first`;
 * returns the calls made and the time they took (every call started is awaited).
 */
async function runFor(
  op: (i: number) => Promise<unknown>,
  concurrency: number,
  ms: number,
  first = 0,
): Promise<{ done: number; elapsedMs: number }> {
  let next = first;
  const started = performance.now();
  const deadline = started + ms;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) await op(next++);
    }),
  );
  return { done: next - first, elapsedMs: performance.now() - started };
}

/** Runs `op` from `concurrency` workers for `ms` milliseconds; returns operations per second. */
export async function opsPerSecond(
  op: (i: number) => Promise<unknown>,
  concurrency: number,
  ms: number,
): Promise<number> {
  const { done, elapsedMs } = await runFor(op, concurrency, ms);
  return done / (elapsedMs / 1000);
}

/** Alternates baseline and candidate `rounds` times; returns the median of each and their ratio. */
export async function compare(
  baseline: () => Promise<number>,
  candidate: () => Promise<number>,
  rounds: number,
): Promise<{ baseline: number; candidate: number; ratio: number; ratios: number[] }> {
  const b: number[] = [];
  const c: number[] = [];
  for (let r = 0; r < rounds; r++) {
    b.push(await baseline());
    c.push(await candidate());
  }
  const ratios = b.map((x, i) => c[i] / x);
  return { baseline: median(b), candidate: median(c), ratio: median(ratios), ratios };
}

/**
 * Ops per second of each operation, measured in turns of `sliceMs` (each at `concurrency`)
 * until each has run about `ms`: the turns go forward then backward (A B C, C B A...), so a
 * drift in the machine's speed (a disk's latency, a neighbour's load) over the run reaches every
 * operation alike, where whole windows of seconds each would see a different moment of it.
 */
export async function interleavedOps<K extends string>(
  ops: Record<K, (i: number) => Promise<unknown>>,
  concurrency: number,
  ms: number,
  sliceMs = 50,
): Promise<Record<K, number>> {
  const keys = Object.keys(ops) as K[];
  const done = new Map<K, number>(keys.map((k) => [k, 0]));
  const spent = new Map<K, number>(keys.map((k) => [k, 0]));
  let next = 0;
  const passes = Math.max(1, Math.round(ms / sliceMs));
  for (let pass = 0; pass < passes; pass++) {
    for (const k of pass % 2 ? [...keys].reverse() : keys) {
      const turn = await runFor(ops[k], concurrency, sliceMs, next);
      next += turn.done;
      spent.set(k, spent.get(k)! + turn.elapsedMs);
      done.set(k, done.get(k)! + turn.done);
    }
  }
  return Object.fromEntries(keys.map((k) => [k, done.get(k)! / (spent.get(k)! / 1000)])) as Record<K, number>;
}

/** `interleavedOps` `count` times: each operation's ops/s of every round, for per-round ratios. */
export async function interleavedRounds<K extends string>(
  ops: Record<K, (i: number) => Promise<unknown>>,
  concurrency: number,
  ms: number,
  count: number,
): Promise<Record<K, number[]>> {
  const out = Object.fromEntries(Object.keys(ops).map((k) => [k, [] as number[]])) as Record<K, number[]>;
  for (let r = 0; r < count; r++) {
    const round = await interleavedOps(ops, concurrency, ms);
    for (const k of Object.keys(ops) as K[]) out[k].push(round[k]);
  }
  return out;
}

export function printTable(title: string, header: string[], rows: (string | number)[][]): void {
  const cells = [header, ...rows.map((r) => r.map((v) => (typeof v === 'number' ? fmt(v) : v)))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => String(r[i]).length)));
  const line = (r: (string | number)[]) => `| ${r.map((v, i) => String(v).padEnd(widths[i])).join(' | ')} |`;
  console.log(`\n${title}\n${line(cells[0])}\n|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of cells.slice(1)) console.log(line(r));
}

function fmt(v: number): string {
  return v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(2);
}

/** Databases to run on: `--db sqlite,postgres` or HOLDFAST_BENCH_DATABASES, default all three. */
export function benchDatabases(args: string[]): Array<'sqlite' | 'postgres' | 'mariadb'> {
  const i = args.indexOf('--db');
  const list = (i >= 0 ? args[i + 1] : process.env.HOLDFAST_BENCH_DATABASES) ?? 'sqlite,postgres,mariadb';
  return list.split(',').map((s) => s.trim()) as Array<'sqlite' | 'postgres' | 'mariadb'>;
}

export function numberArg(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

/**
 * User + system CPU time of every PostgreSQL process on this machine so far (its backends, the
 * WAL writer, autovacuum), in ms, from /proc; NaN where /proc is missing. A backend that exits
 * between two readings takes its time with it, so readings bracket a window in which the
 * workers' connections stay open.
 */
export function postgresCpuMs(): number {
  let dir: string[];
  try {
    dir = readdirSync('/proc');
  } catch {
    return NaN;
  }
  const tick = 1000 / 100; // USER_HZ
  let total = 0;
  for (const pid of dir) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      if (!stat.slice(stat.indexOf('(') + 1, close).startsWith('postgres')) continue;
      const fields = stat.slice(close + 2).split(' '); // from field 3 (state) on
      total += (Number(fields[11]) + Number(fields[12])) * tick; // utime, stime
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** CPU time (user + system, ms) of one process, or of one thread (`pid/task/tid`), from /proc. */
function procCpuMs(path: string): number {
  const stat = readFileSync(`/proc/${path}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * (1000 / 100); // utime, stime in USER_HZ
}

/** The server's CPU time serving some connections, read at two moments. */
export interface ServerCpu {
  /** Takes the first reading: the connections to count must be open by then. */
  start(): Promise<void>;
  /** CPU ms since `start`, or undefined where it cannot be read. */
  stop(): number | undefined;
}

/**
 * The CPU time a database server on this machine spends for the connections to the client's
 * database (the bench's own: others' work on a shared server is left out), the client's own
 * connection excepted: PostgreSQL's backends; MariaDB's connection threads where
 * performance_schema is on (else undefined); nothing for SQLite, whose work is the client's.
 */
export function serverCpu(sql: Pick<SqlClient, 'dialect' | 'query'>): ServerCpu {
  let paths: string[] | undefined;
  let first = new Map<string, number>();
  const read = (list: string[]) => {
    const out = new Map<string, number>();
    for (const p of list) {
      try {
        out.set(p, procCpuMs(p));
      } catch {
        // gone meanwhile: its time is lost with it
      }
    }
    return out;
  };
  return {
    async start() {
      try {
        if (sql.dialect.name === 'postgres') {
          const rows = await sql.query<{ pid: number }>(
            statement(
              'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
            ),
          );
          paths = rows.map((r) => String(r.pid));
        } else if (sql.dialect.name === 'mariadb' || sql.dialect.name === 'mysql') {
          const [on] = await sql.query<{ on: number }>(statement('SELECT @@performance_schema AS `on`'));
          if (Number(on.on) !== 1) return;
          const [pidFile] = await sql.query<{ f: string }>(statement('SELECT @@pid_file AS f'));
          const pid = readFileSync(pidFile.f, 'utf8').trim();
          const rows = await sql.query<{ tid: number }>(
            statement(
              'SELECT THREAD_OS_ID AS tid FROM performance_schema.threads WHERE PROCESSLIST_DB = DATABASE() ' +
                'AND PROCESSLIST_ID <> CONNECTION_ID() AND THREAD_OS_ID IS NOT NULL',
            ),
          );
          paths = rows.map((r) => `${pid}/task/${r.tid}`);
        }
      } catch {
        paths = undefined;
      }
      if (paths) first = read(paths);
    },
    stop() {
      if (!paths) return undefined;
      const last = read(paths);
      let total = 0;
      for (const [p, ms] of last) total += ms - (first.get(p) ?? ms);
      return total;
    },
  };
}
