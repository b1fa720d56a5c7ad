import { openTelemetryApi } from './open-telemetry';
/**
 * The part of OpenTelemetry's metrics API Holdfast uses, declared here so that no published
 * declaration names `@opentelemetry/api` (an optional peer: an app without it still compiles).
 * The real API's meter, counters and histograms satisfy these shapes.
 */
export type MetricAttributes = Record<string, string | number | boolean | undefined>;
export interface MetricOptions {
  description?: string;
  unit?: string;
  /** A histogram's bucket boundaries (OpenTelemetry API 1.7 and later; older ones ignore it). */
  advice?: { explicitBucketBoundaries?: number[] };
}
export interface MetricCounter {
  add(value: number, attributes?: MetricAttributes): void;
}
export interface MetricHistogram {
  record(value: number, attributes?: MetricAttributes): void;
}
/** What an observable gauge's callback is given; it may read asynchronously (OpenTelemetry awaits it). */
export type ObservableCallback = (result: {
  observe(value: number, attributes?: MetricAttributes): void;
}) => void | Promise<void>;
export interface ObservableMetric {
  addCallback(callback: ObservableCallback): void;
  removeCallback?(callback: ObservableCallback): void;
}
export interface Meter {
  createCounter(name: string, options?: MetricOptions): MetricCounter;
  createHistogram(name: string, options?: MetricOptions): MetricHistogram;
  createObservableGauge(name: string, options?: MetricOptions): ObservableMetric;
}

/** What the meter reads of `@opentelemetry/api` (see openTelemetryApi). */
interface OpenTelemetryMetricsApi {
  metrics: { getMeter(name: string): Meter };
}

const noopInstrument = { add: () => undefined, record: () => undefined };
const noopObservable = { addCallback: () => undefined, removeCallback: () => undefined };
const NOOP_METER: Meter = {
  createCounter: () => noopInstrument,
  createHistogram: () => noopInstrument,
  createObservableGauge: () => noopObservable,
};

/**
 * The meter of one Holdfast lib (`@holdfast/<lib>`), whose instruments are named
 * `holdfast.<lib>.<what>`. Without `@opentelemetry/api` installed, a meter that records nothing.
 */
export function holdfastMeter(lib: string): Meter {
  return openTelemetryApi<OpenTelemetryMetricsApi>()?.metrics.getMeter(`@holdfast/${lib}`) ?? NOOP_METER;
}
