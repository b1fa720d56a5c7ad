import { declareMetrics, type MetricSpec } from './declare-metrics';
import type { MetricAttributes } from './meter';

/** Starts reporting one thing this instance may hold; the function it returns stops that. */
export type TrackHeld = (attributes: MetricAttributes, holds: () => boolean, key?: unknown) => () => void;

/**
 * Declares the 0/1 gauge `holdfast.<lib>.<name>` (unit `1`) of what this instance holds (a mutex,
 * a lock's master role) and returns how to track each such thing: while tracked, it is observed
 * as 1 when `holds()` says so, else 0, with its attributes. Tracking again under the same `key`
 * replaces the earlier one (without a key, each tracking is its own).
 */
export function heldGauge(lib: string, spec: Omit<MetricSpec, 'kind' | 'unit'>): TrackHeld {
  const { gauge } = declareMetrics(lib, { gauge: { ...spec, kind: 'gauge', unit: '1' } });
  const tracked = new Map<unknown, { attributes: MetricAttributes; holds: () => boolean }>();
  gauge.addCallback((result) => {
    for (const { attributes, holds } of tracked.values()) result.observe(holds() ? 1 : 0, attributes);
  });
  return (attributes, holds, key = {}) => {
    tracked.set(key, { attributes, holds });
    return () => void tracked.delete(key);
  };
}
