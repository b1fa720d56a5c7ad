import { metrics } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { sqlRetryCounter, type Meter } from '@holdfast/core/kit';
import { holdfastMeter } from '../src/metrics/meter';

// The instruments go through the application's own @opentelemetry/api: with an SDK registered,
// what Holdfast counts reaches the SDK's exporter under holdfast.<lib>.<what>.
describe('holdfastMeter with the OpenTelemetry SDK', () => {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });

  beforeAll(() => metrics.setGlobalMeterProvider(provider));
  afterAll(async () => {
    await provider.shutdown();
    metrics.disable();
  });

  it("the real API's meter has the shape Holdfast declares", () => {
    const meter: Meter = metrics.getMeter('shape-check');
    expect(typeof meter.createObservableGauge).toBe('function');
  });

  it('counts SQL retries and a lib counter, read back from the in-memory exporter', async () => {
    holdfastMeter('demo').createCounter('holdfast.demo.things', { unit: '{thing}' }).add(2, { kind: 'a' });
    sqlRetryCounter('demo')({ attempt: 1, code: '40P01', operation: 'claim', error: new Error('deadlock') });
    await reader.forceFlush();
    const points = new Map<string, number>();
    for (const rm of exporter.getMetrics())
      for (const scope of rm.scopeMetrics)
        for (const metric of scope.metrics)
          for (const p of metric.dataPoints) points.set(metric.descriptor.name, p.value as number);
    expect(points.get('holdfast.demo.things')).toBe(2);
    expect(points.get('holdfast.demo.sql.retries')).toBe(1);
  });
});
