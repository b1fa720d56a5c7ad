import { declareMetrics, heldGauge, monotonicMillis } from '@holdfast/core/kit';

/** The attributes of simba's instruments (namespaced, as OpenTelemetry's conventions ask). */
const MUTEX = 'holdfast.mutex.name';
const REASON = 'holdfast.reason';
const OPERATION = 'holdfast.operation';

/** What a contend service records: SimbaMetrics, or nothing (a spread group's member rows). */
export type MutexMetrics = Pick<SimbaMetrics, 'acquired' | 'released' | 'failed' | 'track'>;

/** Records nothing: the member rows of a spread group are not mutexes of the application's. */
export const UNCOUNTED_METRICS: MutexMetrics = {
  acquired: () => undefined,
  released: () => undefined,
  failed: () => undefined,
  track: () => () => undefined,
};

/** SimbaModule's OpenTelemetry instruments (no-ops unless the application registers an SDK). */
export class SimbaMetrics {
  private readonly instruments = declareMetrics('simba', {
    acquired: {
      kind: 'counter',
      name: 'acquired',
      unit: '{acquisition}',
      description: 'Mutex acquisitions by this instance (not renewals)',
      attributes: [MUTEX],
    },
    released: {
      kind: 'counter',
      name: 'released',
      unit: '{release}',
      description: 'Mutex ownerships given up by this instance (stop, lost, local deadline)',
      attributes: [MUTEX, REASON],
    },
    failures: {
      kind: 'counter',
      name: 'attempt_failures',
      unit: '{attempt}',
      description: 'Acquire/renew/release calls that failed or timed out',
      attributes: [MUTEX, OPERATION],
    },
    renewalAge: {
      kind: 'gauge',
      name: 'renewal.age',
      unit: 's',
      description:
        'Time since the last confirmed acquisition or renewal of a mutex this instance owns (no sample when not owner)',
      attributes: [MUTEX],
    },
  });
  /** The owners' monotonic time of their last confirmed acquisition/renewal, per tracked contender. */
  private readonly renewals = new Map<string, () => number | undefined>();
  private readonly owner = heldGauge('simba', {
    name: 'owner',
    description: '1 while this instance owns the mutex, else 0',
    attributes: [MUTEX],
  });

  constructor() {
    this.instruments.renewalAge.addCallback((result) => {
      const now = monotonicMillis();
      for (const [key, renewedAt] of this.renewals) {
        const at = renewedAt();
        if (at !== undefined) result.observe((now - at) / 1000, { [MUTEX]: key.split('\u0000')[0] });
      }
    });
  }

  acquired(mutex: string): void {
    this.instruments.acquired.add(1, { [MUTEX]: mutex });
  }

  released(mutex: string, reason: string): void {
    this.instruments.released.add(1, { [MUTEX]: mutex, [REASON]: reason });
  }

  /** An acquire (or renewal), read or release of `mutex` that failed or timed out. */
  failed(mutex: string, operation: 'acquire' | 'read' | 'release'): void {
    this.instruments.failures.add(1, { [MUTEX]: mutex, [OPERATION]: operation });
  }

  /**
   * Reports a contender: `holdfast.simba.owner` (1 while `isOwner()`), and, while `renewedAt()`
   * gives the monotonic time of its last confirmed acquisition or renewal (undefined when not
   * owner), `holdfast.simba.renewal.age`. The function it returns stops both.
   */
  track(
    mutex: string,
    contenderId: string,
    isOwner: () => boolean,
    renewedAt: () => number | undefined = () => undefined,
  ): () => void {
    const key = `${mutex}\u0000${contenderId}`;
    const untrack = this.owner({ [MUTEX]: mutex }, isOwner, key);
    this.renewals.set(key, renewedAt);
    return () => {
      untrack();
      this.renewals.delete(key);
    };
  }
}
