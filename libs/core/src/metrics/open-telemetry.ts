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
export interface TraceTracer {
  startSpan(
    name: string,
    options?: { kind?: number; attributes?: Record<string, TraceAttributeValue> },
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

/** The API's SpanKind and SpanStatusCode values used here (stable numbers of the specification). */
export const SPAN_KIND = { INTERNAL: 0, CLIENT: 2, CONSUMER: 4 } as const;
export const SPAN_STATUS_CODE_ERROR = 2;
