import { declareMetrics, heldGauge } from '@holdfast/core/kit';

/** OpenTelemetry instruments of one LockerModule (no-ops without an SDK). */
export class LockerMetrics {
  private readonly instruments = declareMetrics('locker', {
    acquired: {
      kind: 'counter',
      name: 'acquired',
      unit: '{term}',
      description: 'Times this instance became master',
      attributes: ['lock'],
    },
    lost: {
      kind: 'counter',
      name: 'lost',
      unit: '{term}',
      description: 'Times this instance stopped being master, by reason',
      attributes: ['lock', 'reason'],
    },
    keepAliveFailures: {
      kind: 'counter',
      name: 'keep_alive.failures',
      unit: '{keep_alive}',
      description: 'Keep-alives that threw (store unreachable)',
      attributes: ['lock'],
    },
    acquireWait: {
      kind: 'histogram',
      name: 'acquire.wait',
      unit: 'ms',
      description: 'Time from starting to wait until becoming master',
      attributes: ['lock'],
    },
  });
  readonly acquired = this.instruments.acquired;
  readonly lost = this.instruments.lost;
  readonly keepAliveFailures = this.instruments.keepAliveFailures;
  readonly acquireWait = this.instruments.acquireWait;
  private readonly master = heldGauge('locker', {
    name: 'master',
    description: '1 while this instance is master, else 0',
    attributes: ['lock'],
  });

  /** Reports 1 while master, 0 otherwise. */
  observeRole(lockName: string, isMaster: () => boolean): void {
    this.master({ lock: lockName }, isMaster);
  }
}
