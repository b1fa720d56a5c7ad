import {
  openTelemetryApi,
  tracerRegistered,
  SPAN_KIND,
  SPAN_STATUS_CODE_ERROR,
  type OpenTelemetryTraceApi,
  type TraceAttributeValue,
  type TraceSpan,
  type TraceTracer as Tracer,
} from '@holdfast/core/kit';

/** A @Failover call's span: core's structural span (no declaration names `@opentelemetry/api`). */
export type FailoverSpan = TraceSpan;
export type SpanAttributeValue = TraceAttributeValue;

/** SpanKind.INTERNAL and SpanStatusCode.ERROR of the API (stable numbers). */
const SPAN_KIND_INTERNAL = SPAN_KIND.INTERNAL;
export const SPAN_STATUS_ERROR = SPAN_STATUS_CODE_ERROR;

const TRACER_NAME = '@holdfast/failover';

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
 * children), when an OpenTelemetry SDK records; else runs it as it is: with no SDK registered
 * nothing is allocated, with one that does not sample the call only the API's non-recording span.
 */
export function withFailoverSpan<R>(
  name: string,
  body: (span: FailoverSpan | undefined) => Promise<R>,
): Promise<R> {
  const otel = traceApi();
  // No SDK registered: the span would be the API's non-recording one, ended unread.
  if (!otel || !tracerRegistered(otel, TRACER_NAME)) return body(undefined);
  tracer ??= otel.trace.getTracer(TRACER_NAME);
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
