import { declareMetrics, heldGauge } from '@holdfast/core/kit';

/** The attributes of the locker's instruments (namespaced, as OpenTelemetry's conventions ask). */
const LOCK = 'holdfast.lock.name';
const REASON = 'holdfast.reason';

/** OpenTelemetry instruments of one LockerModule (no-ops without an SDK). */
export class LockerMetrics {
  private readonly instruments = declareMetrics('locker', {
    acquired: {
      kind: 'counter',
      name: 'acquired',
      unit: '{term}',
      description: 'Times this instance became master',
      attributes: [LOCK],
    },
    lost: {
      kind: 'counter',
      name: 'lost',
      unit: '{term}',
      description: 'Times this instance stopped being master, by reason',
      attributes: [LOCK, REASON],
    },
    keepAliveFailures: {
      kind: 'counter',
      name: 'keep_alive.failures',
      unit: '{keep_alive}',
      description: 'Keep-alives that threw (store unreachable)',
      attributes: [LOCK],
    },
    acquireWait: {
      kind: 'histogram',
      name: 'acquire.wait',
      unit: 's',
      description: 'Time from starting to wait until becoming master',
      attributes: [LOCK],
      // A standby may wait for hours: buckets up to one.
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
    },
    keepAliveAge: {
      kind: 'gauge',
      name: 'keep_alive.age',
      unit: 's',
      description:
        'Time since this master last acquired the lock or kept it alive (no sample when not master, or when the lock takes no keep-alives)',
      attributes: [LOCK],
    },
  });
  private readonly master = heldGauge('locker', {
    name: 'master',
    description: '1 while this instance is master, else 0',
    attributes: [LOCK],
  });

  /** Reports 1 while master, 0 otherwise. */
  observeRole(lockName: string, isMaster: () => boolean): void {
    this.master({ [LOCK]: lockName }, isMaster);
  }

  /**
   * Reports `holdfast.locker.keep_alive.age` of `lockName` while `keptAliveAt()` gives the epoch ms
   * of the last acquisition or successful keep-alive (undefined when not master or not kept alive).
   */
  observeKeepAlive(lockName: string, keptAliveAt: () => number | undefined): void {
    this.instruments.keepAliveAge.addCallback((result) => {
      const at = keptAliveAt();
      if (at !== undefined) result.observe(Math.max(0, Date.now() - at) / 1000, { [LOCK]: lockName });
    });
  }

  /** Waited `ms` milliseconds for `lock` before becoming master (recorded in seconds). */
  waited(lock: string, ms: number): void {
    this.instruments.acquireWait.record(ms / 1000, { [LOCK]: lock });
  }

  acquired(lock: string): void {
    this.instruments.acquired.add(1, { [LOCK]: lock });
  }

  lost(lock: string, reason: string): void {
    this.instruments.lost.add(1, { [LOCK]: lock, [REASON]: reason });
  }

  keepAliveFailed(lock: string): void {
    this.instruments.keepAliveFailures.add(1, { [LOCK]: lock });
  }
}
