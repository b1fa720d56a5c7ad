import { parseDuration, type Duration } from '@holdfast/core/kit';
import { ScheduledLockConfigurationError } from '../errors';
import { TIMELINE_MARKER } from '../store/lease-failover-grace';

export interface ScheduledLockOptions {
  /** The lock's row in HOLDFAST_LOCK (≤ 64 characters), shared by every instance running the job. */
  name: string;
  /**
   * How long the lock is held at most: if the runner dies mid-job, the next instance may run the
   * job this long after the run started (database clock). Longer than the job ever takes.
   */
  lockAtMostFor: Duration;
  /**
   * How long the lock is held at least, even when the job ends sooner: instances whose timers
   * fire a little later for the same tick do not run it again (default 0).
   */
  lockAtLeastFor?: Duration;
}

/** The options of one decorated method, durations in ms. */
export interface ScheduledLockMetadata {
  name: string;
  lockAtMostFor: number;
  lockAtLeastFor: number;
  /** Class.method, for messages. */
  where: string;
}

/** Validates at decoration time, so a bad option fails when the class is loaded. */
export function scheduledLockMetadata(options: ScheduledLockOptions, where: string): ScheduledLockMetadata {
  const bad = (what: string) => new ScheduledLockConfigurationError(`@ScheduledLock() on ${where}: ${what}`);
  if (typeof options?.name !== 'string' || options.name.length === 0 || options.name.length > 64) {
    throw bad(
      `name ${JSON.stringify(options?.name)} must be a non-empty string of at most 64 characters (HOLDFAST_LOCK.ID)`,
    );
  }
  if (options.name === TIMELINE_MARKER) {
    throw bad(
      `name ${JSON.stringify(options.name)} is reserved: its row of HOLDFAST_LOCK keeps the PostgreSQL timeline ` +
        `for the grace after a failover`,
    );
  }
  let atMost: number;
  let atLeast: number;
  try {
    atMost = parseDuration(options.lockAtMostFor, 'lockAtMostFor');
    atLeast = parseDuration(options.lockAtLeastFor ?? 0, 'lockAtLeastFor');
  } catch (error) {
    throw bad((error as Error).message);
  }
  if (atMost <= 0) throw bad(`lockAtMostFor ${JSON.stringify(options.lockAtMostFor)} must be above 0`);
  if (atLeast > atMost) {
    throw bad(
      `lockAtLeastFor (${atLeast} ms) must not exceed lockAtMostFor (${atMost} ms): the lock cannot be held ` +
        `at least longer than at most`,
    );
  }
  return { name: options.name, lockAtMostFor: atMost, lockAtLeastFor: atLeast, where };
}
