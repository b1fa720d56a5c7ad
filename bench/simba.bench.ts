/**
 * npm run bench -- simba [--db sqlite,postgres,mariadb] [--rounds 20] [--ttl 1000] [--transition 1000]
 *
 * Takeover time of a mutex between real processes: after SIGKILL of the owner (goal: at most
 * ttl + transition + 1 s, since a crashed owner cannot release) and after a graceful stop (goal:
 * at most 1 s, the row is released and standbys poll every 100 ms). Median and max over the
 * rounds, per database. Baseline measured in the same run: one uncontended acquire transaction
 * (UPDATE + SELECT) from the bench process, the floor any handover pays.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { SchemaManager, sqlClientFor } from '@holdfast/core/kit';
import {
  createTestDataSource,
  forkTs,
  tempSqliteFile,
  TEST_DATABASES,
  uniqueTablePrefix,
  waitForExit,
  type TestDatabase,
} from '@holdfast/testing';
import { MutexQueryResolver } from '@holdfast/simba/internal';
import { MutexRepository } from '../libs/simba/src/mutex/mutex.repository';
import { median, printTable } from './support/bench-kit';
import { SIMBA_TABLES } from '@holdfast/simba';

const WORKER = join(__dirname, '..', 'test', 'simba', 'workers', 'contender.worker.ts');

interface Options {
  dbs: TestDatabase[];
  rounds: number;
  ttl: number;
  transition: number;
}

function parseArgs(args: string[]): Options {
  const get = (name: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const dbs = (get('db') ?? process.env.HOLDFAST_TEST_DATABASES ?? TEST_DATABASES.join(','))
    .split(',')
    .map((s) => s.trim()) as TestDatabase[];
  return {
    dbs,
    rounds: Number(get('rounds') ?? 20),
    ttl: Number(get('ttl') ?? 1_000),
    transition: Number(get('transition') ?? 1_000),
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

class Worker {
  owner = false;
  ready: Promise<void>;
  private acquiredListeners: ((w: Worker) => void)[] = [];

  constructor(readonly child: ChildProcess) {
    this.ready = new Promise((resolve) => {
      child.on('message', (m: { type: string }) => {
        if (m.type === 'ready') resolve();
        if (m.type === 'acquired') {
          this.owner = true;
          for (const l of this.acquiredListeners) l(this);
        }
        if (m.type === 'released') this.owner = false;
      });
    });
  }

  onAcquired(listener: (w: Worker) => void): void {
    this.acquiredListeners.push(listener);
  }
}

async function measure(db: TestDatabase, o: Options) {
  const prefix = uniqueTablePrefix(`bench_${db}`);
  const sqliteFile = db === 'sqlite' ? tempSqliteFile('simba-bench') : undefined;
  const setup = await createTestDataSource(db, { sqliteFile });
  const sql = sqlClientFor(setup);
  await new SchemaManager(sql).apply(SIMBA_TABLES.mutex, prefix, 'create');

  // Baseline: uncontended acquire transactions from this process.
  const repository = new MutexRepository(sql, new MutexQueryResolver(sql.dialect, prefix), 2_000);
  const baseline: number[] = [];
  for (let i = 0; i < o.rounds; i++) {
    const t0 = performance.now();
    await repository.acquire('bench-baseline', 'bench', o.ttl, o.transition);
    baseline.push(performance.now() - t0);
  }

  const workers: Worker[] = [];
  let waiter: ((w: Worker) => void) | undefined;
  const spawn = () => {
    const w = new Worker(
      forkTs(WORKER, [db, prefix, 'bench', '-', sqliteFile ?? '-', String(o.ttl), String(o.transition)]),
    );
    w.onAcquired((x) => waiter?.(x));
    workers.push(w);
    return w;
  };
  const live = () => workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
  const nextOwner = (not: Worker, timeoutMs: number) =>
    new Promise<Worker>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${db}: no takeover within ${timeoutMs} ms`)),
        timeoutMs,
      );
      waiter = (w) => {
        if (w === not) return;
        clearTimeout(timer);
        waiter = undefined;
        resolve(w);
      };
    });
  const currentOwner = async () => {
    for (let i = 0; i < 500; i++) {
      const owner = live().find((w) => w.owner);
      if (owner) return owner;
      await sleep(20);
    }
    throw new Error(`${db}: no owner`);
  };

  const graceful: number[] = [];
  const killed: number[] = [];
  try {
    for (let i = 0; i < 3; i++) spawn();
    await Promise.all(workers.map((w) => w.ready));
    for (let round = 0; round < o.rounds; round++) {
      const owner = await currentOwner();
      await sleep(Math.random() * o.ttl);
      const next = nextOwner(owner, 10_000);
      const t0 = performance.now();
      owner.child.send({ type: 'pause' });
      await next;
      graceful.push(performance.now() - t0);
      owner.child.send({ type: 'resume' });
    }
    for (let round = 0; round < o.rounds; round++) {
      const owner = await currentOwner();
      await Promise.all(live().map((w) => w.ready));
      await sleep(Math.random() * o.ttl); // kill at a random point of the renewal cycle
      const next = nextOwner(owner, o.ttl + o.transition + 10_000);
      const t0 = performance.now();
      owner.child.kill('SIGKILL');
      await next;
      killed.push(performance.now() - t0);
      spawn();
    }
  } finally {
    for (const w of workers) w.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => waitForExit(w.child, 5_000)));
    await setup.query(`DROP TABLE IF EXISTS ${prefix}simba_mutex`).catch(() => undefined);
    await setup.destroy();
  }
  return { db, baseline: median(baseline), graceful, killed };
}

export async function main(args: string[]): Promise<void> {
  const o = parseArgs(args);
  const killGoal = o.ttl + o.transition + 1_000;
  const gracefulGoal = 1_000;
  console.log(
    `simba takeover bench: ${o.rounds} handovers per case, ttl ${o.ttl} ms, transition ${o.transition} ms, 3 worker processes`,
  );
  const rows: string[][] = [];
  for (const db of o.dbs) {
    const r = await measure(db, o);
    const fmt = (x: number) => x.toFixed(0);
    for (const [label, xs, goal] of [
      ['graceful stop', r.graceful, gracefulGoal],
      ['SIGKILL', r.killed, killGoal],
    ] as const) {
      const max = Math.max(...xs);
      rows.push([
        db,
        label,
        fmt(median(xs)),
        fmt(max),
        `<= ${goal}`,
        max <= goal ? 'met' : 'MISSED',
        `${(median(xs) / r.baseline).toFixed(0)}x`,
        r.baseline.toFixed(1),
      ]);
    }
  }
  printTable(
    `simba takeover — goal: SIGKILL <= ttl + transition + 1 s = ${killGoal} ms, graceful stop <= ${gracefulGoal} ms`,
    [
      'database',
      'takeover after',
      'median ms',
      'max ms',
      'goal ms',
      'goal',
      'median / baseline',
      'baseline ms',
    ],
    rows,
  );
  console.log(
    'baseline = median of one uncontended acquire transaction (UPDATE + SELECT) from the bench process',
  );
}
