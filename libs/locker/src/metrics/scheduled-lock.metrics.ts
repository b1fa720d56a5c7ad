import { declareMetrics } from '@holdfast/core/kit';

/** The attributes of the @ScheduledLock instruments (namespaced, as OpenTelemetry's conventions ask). */
const JOB = 'holdfast.job.name';
const OUTCOME = 'holdfast.outcome';
const REASON = 'holdfast.reason';

/** OpenTelemetry instruments of the @ScheduledLock runs of this instance (no-ops without an SDK). */
export class ScheduledLockMetrics {
  private readonly instruments = declareMetrics('locker', {
    runs: {
      kind: 'counter',
      name: 'scheduled.runs',
      unit: '{run}',
      description: '@ScheduledLock ticks this instance ran, by job and outcome',
      attributes: [JOB, OUTCOME],
    },
    skips: {
      kind: 'counter',
      name: 'scheduled.skips',
      unit: '{tick}',
      description:
        '@ScheduledLock ticks this instance skipped: locked by another run (reason locked), or the lock table unreachable (unavailable)',
      attributes: [JOB, REASON],
    },
  });

  ran(job: string, outcome: 'success' | 'error'): void {
    this.instruments.runs.add(1, { [JOB]: job, [OUTCOME]: outcome });
  }

  skipped(job: string, reason: 'locked' | 'unavailable'): void {
    this.instruments.skips.add(1, { [JOB]: job, [REASON]: reason });
  }
}
