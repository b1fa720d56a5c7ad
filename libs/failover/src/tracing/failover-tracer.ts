import { openTelemetryApi } from '@holdfast/core/kit';
/**
 * The part of OpenTelemetry's trace API a @Failover call uses, declared here so that no
 * published declaration names `@opentelemetry/api` (an optional peer, as for core's metrics).
 * The real API's tracer, spans and context satisfy these shapes.
 */
export type SpanAttributeValue = string | number | boolean;
export interface FailoverSpan {
  isRecording(): boolean;
  setAttribute(key: string, value: SpanAttributeValue): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error | string): void;
  end(): void;
}
interface Tracer {
  startSpan(
    name: string,
    options?: { kind?: number; attributes?: Record<string, SpanAttributeValue> },
  ): FailoverSpan;
}
interface OpenTelemetryTraceApi {
  trace: {
    getTracer(name: string): Tracer;
    setSpan(context: unknown, span: FailoverSpan): unknown;
  };
  context: {
    active(): unknown;
    with<R>(context: unknown, fn: () => R): R;
  };
}

/** SpanKind.INTERNAL and SpanStatusCode.ERROR of the API (stable numbers). */
const SPAN_KIND_INTERNAL = 0;
export const SPAN_STATUS_ERROR = 2;

/** The API's tracer, got once: it follows whichever SDK is registered, before or after. */
let tracer: Tracer | undefined;

/** The application's own `@opentelemetry/api` (core's openTelemetryApi); null without it. */
const traceApi = () => openTelemetryApi<OpenTelemetryTraceApi>();

/** Span attributes of a @Failover call. */
export const FAILOVER_SPAN_ATTRIBUTES = {
  /** The failover's name. */
  name: 'holdfast.failover.name',
  /** How the call ended: success, fresh, recovered, handler, failed, not-recoverable. */
  outcome: 'holdfast.failover.outcome',
  /** True when the answer is not the upstream's answer to this call (recovered or the handler's). */
  stale: 'holdfast.failover.stale',
  /** True when the call shared another call's upstream attempt (single-flight). */
  shared: 'holdfast.failover.shared',
} as const;

/**
 * Runs `body` inside a span `failover <name>` made active (so the upstream's own spans are its
 * children), when an OpenTelemetry SDK records; else runs it as it is, with nothing allocated
 * beyond the API's non-recording span.
 */
export function withFailoverSpan<R>(
  name: string,
  body: (span: FailoverSpan | undefined) => Promise<R>,
): Promise<R> {
  const otel = traceApi();
  if (!otel) return body(undefined);
  tracer ??= otel.trace.getTracer('@holdfast/failover');
  const span = tracer.startSpan(`failover ${name}`, {
    kind: SPAN_KIND_INTERNAL,
    attributes: { [FAILOVER_SPAN_ATTRIBUTES.name]: name },
  });
  if (!span.isRecording()) {
    span.end();
    return body(undefined);
  }
  let result: Promise<R>;
  try {
    result = otel.context.with(otel.trace.setSpan(otel.context.active(), span), () => body(span));
  } catch (error) {
    result = Promise.reject(error);
  }
  return result.then(
    (value) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      span.setStatus({ code: SPAN_STATUS_ERROR, message: (error as Error)?.message ?? String(error) });
      span.recordException(error instanceof Error ? error : String(error));
      span.end();
      throw error;
    },
  );
}
