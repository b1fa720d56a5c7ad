import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createTestDataSource,
  forkTs,
  tempSqliteFile,
  testDatabases,
  uniqueTablePrefix,
  waitForExit,
  type TestDatabase,
} from '@holdfast/testing';

/** Seconds of chaos per database; the three databases run at the same time. */
const SECONDS = Number(process.env.SIMBA_SOAK_SECONDS ?? 60);
const PROCESSES = 5;
const TTL = 1_000;
const TRANSITION = 1_500;
const WORKER = join(__dirname, 'workers', 'contender.worker.ts');

interface Worker {
  child: ChildProcess;
  owner: boolean;
  stopped: boolean;
}

interface SoakResult {
  db: TestDatabase;
  lines: number;
  owners: number;
  kills: number;
  ownerKills: number;
  pauses: number;
  ownerPauses: number;
  violations: string[];
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const pick = <T>(items: T[]): T => items[Math.floor(Math.random() * items.length)];

/** Entries sorted by time; a later entry never has a lower token, nor (from another pid) the same token or ms. */
export function checkLog(text: string): { violations: string[]; lines: number; owners: number } {
  const entries = text
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' ').map(Number) as [number, number, number])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const violations: string[] = [];
  for (let i = 1; i < entries.length; i++) {
    const [t0, k0, p0] = entries[i - 1];
    const [t1, k1, p1] = entries[i];
    if (k1 < k0) violations.push(`token went down: ${t0} ${k0} pid ${p0} then ${t1} ${k1} pid ${p1}`);
    else if (p1 !== p0 && (k1 === k0 || t1 === t0))
      violations.push(`overlap: ${t0} ${k0} pid ${p0} and ${t1} ${k1} pid ${p1}`);
  }
  return { violations, lines: entries.length, owners: new Set(entries.map((e) => e[2])).size };
}

async function soak(db: TestDatabase): Promise<SoakResult> {
  const prefix = uniqueTablePrefix(`soak_${db}`);
  const log = join(mkdtempSync(join(tmpdir(), 'simba-soak-')), 'owners.log');
  writeFileSync(log, '');
  const sqliteFile = db === 'sqlite' ? tempSqliteFile('simba-soak') : '-';
  const result: SoakResult = {
    db,
    lines: 0,
    owners: 0,
    kills: 0,
    ownerKills: 0,
    pauses: 0,
    ownerPauses: 0,
    violations: [],
  };
  const workers: Worker[] = [];
  const spawn = () => {
    const child = forkTs(WORKER, [db, prefix, 'soak', log, sqliteFile, String(TTL), String(TRANSITION)]);
    const worker: Worker = { child, owner: false, stopped: false };
    child.on('message', (m: { type: string }) => {
      if (m.type === 'acquired') worker.owner = true;
      if (m.type === 'released') worker.owner = false;
    });
    workers.push(worker);
  };
  const alive = () => workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
  // Create the table first so that five processes do not race on CREATE TABLE.
  const setup = await createTestDataSource(db, { sqliteFile: sqliteFile === '-' ? undefined : sqliteFile });
  const { SchemaManager, sqlClientFor } = await import('@holdfast/core/kit');
  const { SIMBA_TABLES } = await import('@holdfast/simba');
  await new SchemaManager(sqlClientFor(setup)).apply(SIMBA_TABLES.mutex, prefix, 'create');
  try {
    for (let i = 0; i < PROCESSES; i++) spawn();
    const end = performance.now() + SECONDS * 1_000;
    while (performance.now() < end) {
      await sleep(1_000 + Math.random() * 1_500);
      const running = alive();
      const owner = running.find((w) => w.owner && !w.stopped);
      const roll = Math.random();
      if (roll < 0.45 && owner) {
        // Kill the owner (a crash mid-ownership); killing standbys only costs process start-ups.
        result.ownerKills++;
        owner.child.kill('SIGKILL');
        result.kills++;
        spawn();
      } else {
        const candidates = running.filter((w) => !w.stopped);
        if (!candidates.length) continue;
        const victim = roll < 0.75 && owner ? owner : pick(candidates);
        if (victim.owner) result.ownerPauses++;
        victim.stopped = true;
        victim.child.kill('SIGSTOP');
        result.pauses++;
        setTimeout(
          () => {
            victim.stopped = false;
            victim.child.kill('SIGCONT');
          },
          300 + Math.random() * 3_500,
        );
      }
    }
    await sleep(4_000); // let every paused process resume and write what it believes
  } finally {
    for (const w of workers) {
      w.child.kill('SIGCONT');
      w.child.kill('SIGKILL');
    }
    await Promise.all(workers.map((w) => waitForExit(w.child, 5_000)));
    await setup.query(`DROP TABLE IF EXISTS ${prefix}simba_mutex`).catch(() => undefined);
    await setup.destroy();
  }
  Object.assign(result, checkLog(readFileSync(log, 'utf8')));
  return result;
}

describe('simba soak: 5 processes per database under SIGKILL / SIGSTOP / SIGCONT', () => {
  it('finds overlapping ownership in a bad log (the checker can fail)', () => {
    expect(checkLog('100 5 1\n120 5 1\n130 6 2\n140 7 2\n').violations).toEqual([]);
    expect(checkLog('100 5 1\n130 6 2\n135 5 1\n').violations).toHaveLength(1);
    expect(checkLog('100 5 1\n100 6 2\n').violations).toHaveLength(1);
  });

  it(
    `never has two owners at once and tokens only increase (${SECONDS} s, databases concurrently)`,
    async () => {
      const results = await Promise.all(testDatabases().map(soak));
      console.log(
        results
          .map(
            (r) =>
              `${r.db}: ${r.lines} owner lines, ${r.owners} owner processes, ${r.kills} SIGKILLs (${r.ownerKills} of the owner), ` +
              `${r.pauses} SIGSTOPs (${r.ownerPauses} of the owner), ${r.violations.length} violations`,
          )
          .join('\n'),
      );
      for (const r of results) {
        expect({ db: r.db, violations: r.violations.slice(0, 5) }).toEqual({ db: r.db, violations: [] });
        expect(r.lines).toBeGreaterThan(50); // ownership was observed (a floor that holds on a loaded machine)
        expect(r.owners).toBeGreaterThan(2);
        expect(r.ownerKills).toBeGreaterThan(0);
      }
    },
    (SECONDS + 90) * 1_000,
  );
});
