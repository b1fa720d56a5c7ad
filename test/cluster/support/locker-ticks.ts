/**
 * The master ticks of the locker workers (workers/locker-ticker.worker.ts): "<epoch ms> <pid>"
 * every 20 ms while a process believes it is master. The locker has no fencing token, so two
 * masters at once show as a tick of one process inside a stretch of another's: between two
 * consecutive ticks of the other process that are at most `gapMs` apart (it was ticking, without
 * a pause, all along).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const LOCKER_WORKER = join(__dirname, '..', 'workers', 'locker-ticker.worker.ts');

/** Longest pause between two ticks of one process that still counts as one stretch of mastership. */
export const TICK_GAP_MS = 500;

export interface LockerTickReport {
  ticks: number;
  /** Processes that ticked. */
  masters: number;
  /** Ticks of one process inside another's stretch (must be 0). */
  overlappingTicks: number;
  /** The first few overlaps, readable. */
  overlaps: string[];
  /** Stretches of mastership in time order: pid, first and last tick (epoch ms). */
  stretches: { pid: number; from: number; to: number }[];
}

export function checkLockerTicks(file: string, gapMs = TICK_GAP_MS): LockerTickReport {
  const entries = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' ').map(Number) as [number, number])
    .sort((a, b) => a[0] - b[0]);
  const byPid = new Map<number, number[]>();
  for (const [at, pid] of entries) byPid.set(pid, [...(byPid.get(pid) ?? []), at]);
  // Per process, the stretches of ticks no more than gapMs apart.
  const stretches: { pid: number; from: number; to: number }[] = [];
  for (const [pid, times] of byPid) {
    let from = times[0];
    for (let i = 1; i <= times.length; i++) {
      if (i === times.length || times[i] - times[i - 1] > gapMs) {
        stretches.push({ pid, from, to: times[i - 1] });
        if (i < times.length) from = times[i];
      }
    }
  }
  stretches.sort((a, b) => a.from - b.from);
  const overlaps: string[] = [];
  let overlappingTicks = 0;
  for (const [at, pid] of entries) {
    const inside = stretches.find((s) => s.pid !== pid && s.from <= at && at <= s.to);
    if (!inside) continue;
    overlappingTicks++;
    if (overlaps.length < 5)
      overlaps.push(
        `pid ${pid} ticked at ${at}, inside pid ${inside.pid}'s stretch ${inside.from}..${inside.to}`,
      );
  }
  return { ticks: entries.length, masters: byPid.size, overlappingTicks, overlaps, stretches };
}
