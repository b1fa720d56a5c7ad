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

/** The API's SpanKind and SpanStatusCode values used here (stable numbers of the specification). */
export const SPAN_KIND = { INTERNAL: 0, CLIENT: 2, PRODUCER: 3, CONSUMER: 4 } as const;
export const SPAN_STATUS_CODE_ERROR = 2;
