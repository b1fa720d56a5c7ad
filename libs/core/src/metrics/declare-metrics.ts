import { holdfastMeter, type MetricCounter, type MetricHistogram, type ObservableMetric } from './meter';

/** One instrument of a lib: its name below `holdfast.<lib>.`, kind, UCUM unit and meaning. */
export interface MetricSpec {
  readonly kind: 'counter' | 'histogram' | 'gauge';
  /** The part after `holdfast.<lib>.`, dot-separated, snake_case words: `cleanup.rows`. */
  readonly name: string;
  /** UCUM, as OpenTelemetry expects: `ms`, `1`, or an annotation such as `{call}`, `{row}`. */
  readonly unit: string;
  readonly description: string;
  /** The attributes it is recorded with, for the documentation. */
  readonly attributes?: readonly string[];
}

export type MetricInstrument<S extends MetricSpec> = S['kind'] extends 'counter'
  ? MetricCounter
  : S['kind'] extends 'histogram'
    ? MetricHistogram
    : ObservableMetric;

/** A declared metric with its full name, as listed by `declaredMetrics()`. */
export interface DeclaredMetric extends MetricSpec {
  readonly lib: string;
  readonly fullName: string;
}

const declared = new Map<string, DeclaredMetric>();
const NAME = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;

/**
 * Declares a lib's metrics from one spec and returns the instruments, keyed as the spec is: the
 * one way a Holdfast lib creates OpenTelemetry instruments, named `holdfast.<lib>.<name>`, with a
 * unit. Without `@opentelemetry/api` (or an SDK) they record nothing. Every declaration is listed
 * by `declaredMetrics()`, from which the metrics table in the README is checked.
 */
export function declareMetrics<const S extends Record<string, MetricSpec>>(
  lib: string,
  specs: S,
): { [K in keyof S]: MetricInstrument<S[K]> } {
  const meter = holdfastMeter(lib);
  const instruments: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(specs)) {
    if (!NAME.test(spec.name)) throw new Error(`metric name '${spec.name}' of ${lib} is not dot.snake_case`);
    const fullName = `holdfast.${lib}.${spec.name}`;
    declared.set(fullName, { ...spec, lib, fullName });
    const options = { description: spec.description, unit: spec.unit };
    instruments[key] =
      spec.kind === 'counter'
        ? meter.createCounter(fullName, options)
        : spec.kind === 'histogram'
          ? meter.createHistogram(fullName, options)
          : meter.createObservableGauge(fullName, options);
  }
  return instruments as { [K in keyof S]: MetricInstrument<S[K]> };
}

/** Every metric declared so far in this process (the libs declare theirs when loaded). */
export function declaredMetrics(): DeclaredMetric[] {
  return [...declared.values()].sort((a, b) => a.fullName.localeCompare(b.fullName));
}
