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
