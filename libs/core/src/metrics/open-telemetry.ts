/**
 * `@opentelemetry/api` is an optional peer of every lib: the application's own copy, loaded on
 * first use, so that an application without it still loads them. A second copy inside Holdfast
 * would record nothing: the API's global registry lives in the copy the SDK registered with.
 * Null without it. Each caller names the parts it reads (metrics, trace, context) as its type.
 */
let api: unknown;
let loaded = false;

export function openTelemetryApi<T>(): T | null {
  if (!loaded) {
    loaded = true;
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      api = require('@opentelemetry/api');
    } catch {
      api = null;
    }
  }
  return api as T | null;
}

/**
 * The part of OpenTelemetry's trace API a lib's spans use, declared here so that no published
 * declaration names `@opentelemetry/api` (an optional peer). The real API satisfies these shapes.
 */
export type TraceAttributeValue = string | number | boolean;
export interface TraceSpan {
  isRecording(): boolean;
  setAttribute(key: string, value: TraceAttributeValue): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error | string): void;
  end(): void;
}
/** A span's identity, as a link or a propagated parent names it. */
export interface TraceSpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
}
export interface TraceTracer {
  startSpan(
    name: string,
    options?: {
      kind?: number;
      attributes?: Record<string, TraceAttributeValue>;
      links?: { context: TraceSpanContext }[];
    },
    context?: unknown,
  ): TraceSpan;
}
export interface OpenTelemetryTraceApi {
  trace: {
    getTracer(name: string): TraceTracer;
    setSpan(context: unknown, span: TraceSpan): unknown;
    /** The API's global provider (a ProxyTracerProvider, which delegates to the SDK's once one is registered). */
    getTracerProvider(): unknown;
  };
  context: {
    active(): unknown;
    with<R>(context: unknown, fn: () => R): R;
  };
}

/**
 * The trace API with the parts that carry a context across a process boundary: the global
 * propagator (`inject` into / `extract` from a carrier of text headers, e.g. W3C `traceparent`),
 * and the span context a context holds.
 */
export interface OpenTelemetryPropagationApi extends OpenTelemetryTraceApi {
  trace: OpenTelemetryTraceApi['trace'] & {
    getSpanContext(context: unknown): TraceSpanContext | undefined;
  };
  propagation: {
    inject(context: unknown, carrier: Record<string, string>): void;
    extract(context: unknown, carrier: Record<string, string>): unknown;
  };
}

/**
 * False while no tracer provider is registered with the API (no SDK): a tracer named `name` then
 * hands out the API's non-recording spans, which nothing reads, so a hot path (a span per inbox
 * message) can skip making one, its name and its attributes. A provider registered later is seen
 * at the next call. True whenever the API's provider is not the usual proxy (nothing is skipped).
 */
export function tracerRegistered(otel: OpenTelemetryTraceApi, name: string): boolean {
  const provider = otel.trace.getTracerProvider() as {
    getDelegateTracer?: (tracer: string) => unknown;
  } | null;
  if (typeof provider?.getDelegateTracer !== 'function') return true;
  return provider.getDelegateTracer(name) !== undefined;
}

/** The API's SpanKind and SpanStatusCode values used here (stable numbers of the specification). */
export const SPAN_KIND = { INTERNAL: 0, CLIENT: 2, PRODUCER: 3, CONSUMER: 4 } as const;
export const SPAN_STATUS_CODE_ERROR = 2;
