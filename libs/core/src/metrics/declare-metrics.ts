import { holdfastMeter, type MetricCounter, type MetricHistogram, type ObservableMetric } from './meter';
import { InvalidMetricSpecError } from '../errors/kit.errors';

/** One instrument of a lib: its name below `holdfast.<lib>.`, kind, UCUM unit and meaning. */
export interface MetricSpec {
  readonly kind: 'counter' | 'histogram' | 'gauge';
  /** The part after `holdfast.<lib>.`, dot-separated, snake_case words: `cleanup.rows`. */
  readonly name: string;
  /**
   * UCUM, as OpenTelemetry's conventions ask: `s` for every duration (never `ms`), `1`, or an
   * annotation such as `{call}`, `{row}`.
   */
  readonly unit: string;
  readonly description: string;
  /**
   * The attributes it is recorded with (checked, and listed in the documentation): Holdfast's own
   * under `holdfast.` (`holdfast.inbox.name`), or a standard one of OpenTelemetry's semantic
   * conventions (`db.response.status_code`).
   */
  readonly attributes?: readonly string[];
  /** A histogram's bucket boundaries, in its unit (default for `s`: SECOND_BUCKETS). */
  readonly buckets?: readonly number[];
}

/**
 * The boundaries OpenTelemetry's semantic conventions advise for durations in seconds (those of
 * `http.server.request.duration`): the SDK's own default is made for milliseconds.
 */
const SECOND_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
];

/** The semantic conventions' attributes Holdfast records; any other is namespaced `holdfast.`. */
const STANDARD_ATTRIBUTES = ['db.response.status_code'];
/** Time units other than the seconds OpenTelemetry's conventions ask for. */
const NON_SECOND_TIME = /^(ms|us|ns|min|h|d)$/;

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

/** The conventions every Holdfast instrument keeps, checked when it is declared. */
function checkSpec(lib: string, spec: MetricSpec): void {
  if (!NAME.test(spec.name))
    throw new InvalidMetricSpecError(`metric name '${spec.name}' of ${lib} is not dot.snake_case`);
  if (NON_SECOND_TIME.test(spec.unit)) {
    throw new InvalidMetricSpecError(
      `metric '${spec.name}' of ${lib} has unit '${spec.unit}': durations are in s`,
    );
  }
  for (const attribute of spec.attributes ?? []) {
    const namespaced = attribute.startsWith('holdfast.') && NAME.test(attribute);
    if (!namespaced && !STANDARD_ATTRIBUTES.includes(attribute)) {
      throw new InvalidMetricSpecError(
        `attribute '${attribute}' of metric '${spec.name}' of ${lib} is neither holdfast.<dot.snake_case> ` +
          `nor one of OpenTelemetry's (${STANDARD_ATTRIBUTES.join(', ')})`,
      );
    }
  }
}

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
    checkSpec(lib, spec);
    const fullName = `holdfast.${lib}.${spec.name}`;
    declared.set(fullName, { ...spec, lib, fullName });
    const options = { description: spec.description, unit: spec.unit };
    const buckets = spec.buckets ?? (spec.unit === 's' ? SECOND_BUCKETS : undefined);
    instruments[key] =
      spec.kind === 'counter'
        ? meter.createCounter(fullName, options)
        : spec.kind === 'histogram'
          ? meter.createHistogram(fullName, {
              ...options,
              ...(buckets ? { advice: { explicitBucketBoundaries: [...buckets] } } : {}),
            })
          : meter.createObservableGauge(fullName, options);
  }
  return instruments as { [K in keyof S]: MetricInstrument<S[K]> };
}

/** Every metric declared so far in this process (the libs declare theirs when loaded). */
export function declaredMetrics(): DeclaredMetric[] {
  return [...declared.values()].sort((a, b) => a.fullName.localeCompare(b.fullName));
}
