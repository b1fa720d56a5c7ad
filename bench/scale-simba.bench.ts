/**
 * npm run bench -- scale-simba [--db sqlite,postgres,mariadb] [--mutexes 10,100,1000,5000]
 *   [--ttl 2000] [--transition 1000] [--measure 10000] [--mariadb-port 25463]
 *
 * How Simba's cost grows with the number of mutexes: two processes contend for the same M
 * mutexes; per database and M it prints the statements per second the server counted in the
 * steady state (PostgreSQL: pg_stat_database transactions of the test database; MariaDB:
 * `Questions` of a private server on port 25463 (or `--mariadb-port`), since the shared server counts everyone's),
 * per mutex per second (goal at 1,000: at most 0.25), the CPU of each process (% of one core,
 * goal < 10), the time until every mutex is owned (goal: ttl + transition) and the takeover
 * after a SIGKILL of the process that owns most (goal: ttl + transition + 1 s).
 * `scaleSimba(args)` returns the rows for a combined `npm run bench -- scale`.
 */
import { PrivateMariaDb } from '../test/simba/support/private-mariadb';
import { runScale } from '../test/simba/support/scale-run';
import { benchDatabases, numberArg, printTable } from './support/bench-kit';

const MARIADB_PORT = 25463;

export interface SimbaScaleRow {
  db: string;
  mutexes: number;
  statementsPerSecond?: number;
  perMutexPerSecond?: number;
  cpuPercent?: number;
  allOwnedMs?: number;
  takeoverMs?: number;
  overlaps?: number;
  /** Why the run did not complete (for instance: never every mutex owned within 60 s). */
  failed?: string;
}

export async function scaleSimba(args: string[]): Promise<SimbaScaleRow[]> {
  const i = args.indexOf('--mutexes');
  const sizes = (i >= 0 ? args[i + 1] : '10,100,1000,5000').split(',').map(Number);
  const ttl = numberArg(args, '--ttl', 2_000);
  const transition = numberArg(args, '--transition', 1_000);
  const measureMs = numberArg(args, '--measure', 10_000);
  const mariadbPort = numberArg(args, '--mariadb-port', MARIADB_PORT);
  const rows: SimbaScaleRow[] = [];
  for (const db of benchDatabases(args)) {
    const maria = db === 'mariadb' ? new PrivateMariaDb(mariadbPort) : undefined;
    await maria?.start();
    try {
      for (const mutexes of sizes) {
        try {
          const r = await runScale({
            db,
            mutexes,
            ttl,
            transition,
            standbyPoll: 500,
            measureMs,
            url: maria?.url,
          });
          rows.push({
            db,
            mutexes,
            statementsPerSecond: r.statementsPerSecond,
            perMutexPerSecond: r.perMutexPerSecond,
            cpuPercent: Math.max(...r.cpuPercent),
            allOwnedMs: r.allOwnedMs,
            takeoverMs: r.takeoverMs,
            overlaps: r.overlaps.length,
          });
        } catch (error) {
          // That it never got there is the figure.
          rows.push({ db, mutexes, failed: (error as Error).message });
        }
        console.log(`${db} ${mutexes}: ${rows[rows.length - 1].failed ?? 'done'}`);
      }
    } finally {
      await maria?.stop();
    }
  }
  return rows;
}

export async function main(args: string[]): Promise<void> {
  printScaleSimba(await scaleSimba(args));
}

export function printScaleSimba(rows: SimbaScaleRow[]): void {
  const n = (v: number | undefined, digits?: number) =>
    v === undefined ? 'n/a' : digits === undefined ? v : v.toFixed(digits);
  printTable(
    'Simba at scale: 2 processes contending for the same M mutexes (ttl 2 s, transition 1 s)',
    [
      'db',
      'mutexes',
      'statements/s',
      'per mutex/s',
      'CPU % (max)',
      'all owned ms',
      'takeover ms',
      'overlaps',
    ],
    rows.map((r) =>
      r.failed
        ? [r.db, String(r.mutexes), 'FAILED', r.failed, '', '', '', '']
        : [
            r.db,
            String(r.mutexes),
            n(r.statementsPerSecond),
            n(r.perMutexPerSecond, 4),
            n(r.cpuPercent),
            n(r.allOwnedMs),
            n(r.takeoverMs),
            String(r.overlaps ?? 'n/a'),
          ],
    ),
  );
}
