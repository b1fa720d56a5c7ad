import { trace, type Tracer, type TracerProvider } from '@opentelemetry/api';

/** A tracer that is never called: only whether a provider is registered matters here. */
const tracer = {} as Tracer;
import { openTelemetryApi, tracerRegistered, type OpenTelemetryTraceApi } from '@holdfast/core/kit';

describe('tracerRegistered', () => {
  const otel = openTelemetryApi<OpenTelemetryTraceApi>()!;

  afterEach(() => trace.disable());

  it('is false while no tracer provider is registered, and true once one is', () => {
    expect(tracerRegistered(otel, '@holdfast/test')).toBe(false);
    const provider: TracerProvider = { getTracer: () => tracer };
    trace.setGlobalTracerProvider(provider);
    expect(tracerRegistered(otel, '@holdfast/test')).toBe(true);
    trace.disable();
    expect(tracerRegistered(otel, '@holdfast/test')).toBe(false);
  });
});
