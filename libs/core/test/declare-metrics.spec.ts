import { metrics } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type HistogramMetricData,
} from '@opentelemetry/sdk-metrics';
import { declareMetrics } from '@holdfast/core/kit';

/**
 * OpenTelemetry's conventions, held at declaration: durations in seconds, attributes namespaced
 * (Holdfast's under `holdfast.`, or a standard one), so no lib can declare an instrument whose
 * Prometheus name or labels the documented alerts would miss.
 */
describe('declareMetrics keeps the conventions', () => {
  it('refuses a duration in ms (or any time unit but s)', () => {
    for (const unit of ['ms', 'us', 'min', 'h']) {
      expect(() =>
        declareMetrics('conventions', {
          d: { kind: 'histogram', name: `in_${unit}`, unit, description: 'x' },
        }),
      ).toThrow(`has unit '${unit}': durations are in s`);
    }
  });

  it('refuses attributes that are not namespaced, and db.error.code (not in the semantic conventions)', () => {
    for (const attribute of ['inbox', 'payloadClass', 'db.error.code', 'holdfast.Inbox', 'holdfast.']) {
      expect(() =>
        declareMetrics('conventions', {
          c: { kind: 'counter', name: 'counted', unit: '{thing}', description: 'x', attributes: [attribute] },
        }),
      ).toThrow(`attribute '${attribute}' of metric 'counted' of conventions is neither holdfast.`);
    }
    expect(() =>
      declareMetrics('conventions', {
        c: {
          kind: 'counter',
          name: 'retried',
          unit: '{retry}',
          description: 'x',
          attributes: ['holdfast.operation', 'db.response.status_code'],
        },
      }),
    ).not.toThrow();
  });

  it('gives a histogram in seconds bucket boundaries for seconds, not the SDK default made for ms', async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const provider = new MeterProvider({ readers: [reader] });
    metrics.setGlobalMeterProvider(provider);
    try {
      const { d } = declareMetrics('conventions', {
        d: { kind: 'histogram', name: 'waited', unit: 's', description: 'x' },
      });
      d.record(0.02);
      await reader.forceFlush();
      const [metric] = exporter.getMetrics()[0].scopeMetrics[0].metrics as HistogramMetricData[];
      const { boundaries, counts } = metric.dataPoints[0].value.buckets;
      expect(boundaries[0]).toBe(0.005);
      expect(boundaries.at(-1)).toBe(10);
      // 0.02 s falls in (0.01, 0.025], not in the default's first bucket (0, 5].
      expect(counts[boundaries.indexOf(0.025)]).toBe(1);
    } finally {
      await provider.shutdown();
      metrics.disable();
    }
  });
});
