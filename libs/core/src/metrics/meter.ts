import type { Meter } from '@opentelemetry/api';

/**
 * `@opentelemetry/api` is an optional peer: the application's own copy, loaded on first use so
 * that an app without it still loads every lib. A second copy inside Holdfast would lose every
 * metric (the API's global registry lives in the copy the SDK was registered with).
 */
let api: typeof import('@opentelemetry/api') | null | undefined;

function openTelemetryApi(): typeof import('@opentelemetry/api') | null {
  if (api === undefined) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      api = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
    } catch {
      api = null;
    }
  }
  return api;
}

const noopInstrument = { add: () => undefined, record: () => undefined };
const noopObservable = { addCallback: () => undefined, removeCallback: () => undefined };
const NOOP_METER = {
  createCounter: () => noopInstrument,
  createUpDownCounter: () => noopInstrument,
  createHistogram: () => noopInstrument,
  createGauge: () => noopInstrument,
  createObservableCounter: () => noopObservable,
  createObservableUpDownCounter: () => noopObservable,
  createObservableGauge: () => noopObservable,
  addBatchObservableCallback: () => undefined,
  removeBatchObservableCallback: () => undefined,
} as unknown as Meter;

/**
 * The meter of one Holdfast lib (`@holdfast/<lib>`), whose instruments are named
 * `holdfast.<lib>.<what>`. Without `@opentelemetry/api` installed, a meter that records nothing.
 */
export function holdfastMeter(lib: string): Meter {
  return openTelemetryApi()?.metrics.getMeter(`@holdfast/${lib}`) ?? NOOP_METER;
}
