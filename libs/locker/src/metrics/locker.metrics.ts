import { holdfastMeter, type MetricCounter, type MetricHistogram } from '@holdfast/core';

/** OpenTelemetry instruments of one LockerModule (no-ops without an SDK). */
export class LockerMetrics {
  private readonly meter = holdfastMeter('locker');
  readonly acquired: MetricCounter = this.meter.createCounter('holdfast.locker.acquired', {
    description: 'Times this instance became master',
  });
  readonly lost: MetricCounter = this.meter.createCounter('holdfast.locker.lost', {
    description: 'Times this instance stopped being master, by reason',
  });
  readonly keepAliveFailures: MetricCounter = this.meter.createCounter(
    'holdfast.locker.keep_alive.failures',
    {
      description: 'Keep-alives that threw (store unreachable)',
    },
  );
  readonly acquireWait: MetricHistogram = this.meter.createHistogram('holdfast.locker.acquire.wait', {
    description: 'Time from starting to wait until becoming master',
    unit: 'ms',
  });

  /** Reports 1 while master, 0 otherwise. */
  observeRole(lockName: string, isMaster: () => boolean): void {
    this.meter
      .createObservableGauge('holdfast.locker.master', { description: '1 while this instance is master' })
      .addCallback((result) => result.observe(isMaster() ? 1 : 0, { lock: lockName }));
  }
}
