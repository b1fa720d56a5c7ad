import { holdfastMeter, type MetricCounter } from '@holdfast/core';

/** OpenTelemetry instruments of SimbaModule (no-ops unless the application registers an SDK). */
export class SimbaMetrics {
  private readonly meter = holdfastMeter('simba');
  readonly acquired: MetricCounter = this.meter.createCounter('holdfast.simba.acquired', {
    description: 'Mutex acquisitions by this instance (not renewals)',
  });
  readonly released: MetricCounter = this.meter.createCounter('holdfast.simba.released', {
    description: 'Mutex ownerships given up by this instance (stop, lost, local deadline)',
  });
  readonly failures: MetricCounter = this.meter.createCounter('holdfast.simba.attempt_failures', {
    description: 'Acquire/renew/release calls that failed or timed out',
  });
  private readonly owned = new Map<string, () => boolean>();

  constructor() {
    this.meter
      .createObservableGauge('holdfast.simba.owner', {
        description: '1 while this instance owns the mutex, else 0',
      })
      .addCallback((result) => {
        for (const [key, isOwner] of this.owned) {
          const [mutex] = key.split('\u0000');
          result.observe(isOwner() ? 1 : 0, { mutex });
        }
      });
  }

  track(mutex: string, contenderId: string, isOwner: () => boolean): () => void {
    const key = `${mutex}\u0000${contenderId}`;
    this.owned.set(key, isOwner);
    return () => this.owned.delete(key);
  }
}
