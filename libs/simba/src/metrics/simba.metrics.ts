import { declareMetrics, heldGauge } from '@holdfast/core/kit';

/** SimbaModule's OpenTelemetry instruments (no-ops unless the application registers an SDK). */
export class SimbaMetrics {
  private readonly instruments = declareMetrics('simba', {
    acquired: {
      kind: 'counter',
      name: 'acquired',
      unit: '{acquisition}',
      description: 'Mutex acquisitions by this instance (not renewals)',
      attributes: ['mutex'],
    },
    released: {
      kind: 'counter',
      name: 'released',
      unit: '{release}',
      description: 'Mutex ownerships given up by this instance (stop, lost, local deadline)',
      attributes: ['mutex', 'reason'],
    },
    failures: {
      kind: 'counter',
      name: 'attempt_failures',
      unit: '{attempt}',
      description: 'Acquire/renew/release calls that failed or timed out',
      attributes: ['mutex', 'operation'],
    },
  });
  readonly acquired = this.instruments.acquired;
  readonly released = this.instruments.released;
  readonly failures = this.instruments.failures;
  private readonly owner = heldGauge('simba', {
    name: 'owner',
    description: '1 while this instance owns the mutex, else 0',
    attributes: ['mutex'],
  });

  track(mutex: string, contenderId: string, isOwner: () => boolean): () => void {
    return this.owner({ mutex }, isOwner, `${mutex}\u0000${contenderId}`);
  }
}
