/**
 * @ScheduledLock across real processes: three instances run a per-second @Cron job; every tick
 * runs exactly once; a runner SIGKILLed mid-job keeps the tick's lock until lockAtMostFor, and
 * the job runs again after that, never earlier.
 */
import { monotonicMillis } from '@holdfast/core/kit';
import {
  forkTs,
  waitUntil,
  tempSqliteFile,
  soakDatabase,
  uniqueTablePrefix,
  waitForExit,
} from '@holdfast/testing';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { ScheduledWorkerConfig, ScheduledWorkerMessage } from './workers/scheduled-worker';

const WORKER = join(__dirname, 'workers', 'scheduled-worker.ts');
const RUN_SECONDS = Number(process.env.HOLDFAST_SCHEDULED_LOCK_SECONDS ?? 30);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

jest.setTimeout(120_000 + RUN_SECONDS * 1_000);

interface Worker {
  name: string;
  child: ChildProcess;
  messages: ScheduledWorkerMessage[];
}

function spawn(config: ScheduledWorkerConfig): Worker {
  const child = forkTs(WORKER, [], {
    env: { ...process.env, HOLDFAST_SCHEDULED_WORKER: JSON.stringify(config) },
  });
  const worker: Worker = { name: config.name, child, messages: [] };
  child.on('message', (m) => worker.messages.push(m as ScheduledWorkerMessage));
  return worker;
}

const runs = (workers: Worker[]) =>
  workers
    .flatMap((w) => w.messages.filter((m) => m.type === 'run').map((m) => ({ ...m, name: w.name })))
    .sort((a, b) => (a as { at: number }).at - (b as { at: number }).at) as {
    name: string;
    wall: number;
    at: number;
  }[];

// One database (the property is the cron's and the processes'; the lock's statements run on every
// database in libs/locker/test): MariaDB, or the first selected.
for (const db of soakDatabase(['mariadb', 'postgres', 'sqlite'])) {
  describe(`@ScheduledLock across processes [${db}]`, () => {
    const workers: Worker[] = [];
    afterEach(async () => {
      await Promise.all(
        workers.splice(0).map(async ({ child }) => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill('SIGKILL');
          await waitForExit(child);
        }),
      );
    });

    const start = async (base: Omit<ScheduledWorkerConfig, 'name' | 'awaitGo'>) => {
      for (const name of ['a', 'b', 'c']) workers.push(spawn({ ...base, name, awaitGo: true }));
      await waitUntil(() => workers.every((w) => w.messages.some((m) => m.type === 'ready')), {
        timeout: 60_000,
        message: 'three ready workers',
      });
      for (const { child } of workers) child.send({ type: 'go' });
    };

    it(`three instances, a per-second cron for ${RUN_SECONDS} s: every tick runs exactly once`, async () => {
      await start({
        db,
        sqliteFile: db === 'sqlite' ? tempSqliteFile('scheduled-lock') : undefined,
        prefix: uniqueTablePrefix(`sl_${db}`),
        lockName: 'every-second',
        lockAtMostFor: 10_000,
        lockAtLeastFor: 500,
        jobMs: 50,
      });
      const from = Date.now();
      await sleep(RUN_SECONDS * 1_000);
      const until = Date.now();
      // Ticks fully inside the window, by the second their run started in.
      const all = runs(workers).filter((r) => r.wall >= from && r.wall < until);
      const ticks = all.map((r) => Math.floor(r.wall / 1_000));
      const first = Math.ceil(from / 1_000) + 1;
      const last = Math.floor(until / 1_000) - 1;
      const counts = new Map<number, number>();
      for (const t of ticks) counts.set(t, (counts.get(t) ?? 0) + 1);
      const twice = [...counts].filter(([, n]) => n > 1).map(([t]) => t);
      const missing: number[] = [];
      for (let t = first; t <= last; t++) if (!counts.has(t)) missing.push(t);
      const by = new Map<string, number>();
      for (const r of all) by.set(r.name, (by.get(r.name) ?? 0) + 1);
      console.log(
        `[scheduled-lock] ${db}: ${all.length} runs over ${last - first + 1} whole ticks; by instance ${JSON.stringify(Object.fromEntries(by))}`,
      );
      expect(twice).toEqual([]);
      expect(missing).toEqual([]);
    });

    it('the runner is SIGKILLed mid-job: the job runs again after lockAtMostFor, never earlier', async () => {
      // Long enough that the kill lands well inside the lock on a busy machine: a kill that came
      // after lockAtMostFor would let the runner itself start the next tick before it died.
      const lockAtMostFor = 10_000;
      await start({
        db,
        sqliteFile: db === 'sqlite' ? tempSqliteFile('scheduled-lock-kill') : undefined,
        prefix: uniqueTablePrefix(`slk_${db}`),
        lockName: 'long-job',
        lockAtMostFor,
        lockAtLeastFor: 500,
        // Longer than lockAtMostFor: a live runner would overrun its lock too, so it is killed first.
        jobMs: 60_000,
      });
      await waitUntil(() => runs(workers).length > 0, { timeout: 30_000, message: 'a first run' });
      const [started] = runs(workers);
      await sleep(1_000);
      const runner = workers.find((w) => w.name === started.name)!;
      const killedAt = monotonicMillis();
      runner.child.kill('SIGKILL');
      await waitForExit(runner.child);
      await waitUntil(() => runs(workers).length > 1, { timeout: 40_000, message: 'a run after the kill' });
      const next = runs(workers)[1];
      console.log(
        `[scheduled-lock] ${db}: killed ${killedAt - started.at} ms into the run; next run ${next.at - started.at} ms after the first started (lockAtMostFor ${lockAtMostFor} ms)`,
      );
      // The premise: the runner died holding a lock it had not yet outlived.
      expect(killedAt - started.at).toBeLessThan(lockAtMostFor);
      expect(next.name).not.toBe(started.name);
      // The lock was taken (database clock) just before the job started: the next run may not
      // start before lockAtMostFor after that, and starts at one of the next ticks.
      expect(next.at - started.at).toBeGreaterThanOrEqual(lockAtMostFor - 100);
      expect(next.at - started.at).toBeLessThan(lockAtMostFor + 5_000);
    });
  });
}
