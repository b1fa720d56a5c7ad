import { extractTraceContext } from './trace-context';
import {
  openTelemetryApi,
  tracerRegistered,
  SPAN_KIND,
  SPAN_STATUS_CODE_ERROR,
  type OpenTelemetryPropagationApi,
  type TraceSpan as Span,
  type TraceTracer as Tracer,
} from '@holdfast/core/kit';

/** `messaging.system`: not one of the conventions' well-known values. */
export const MESSAGING_SYSTEM = 'holdfast_inbox';
const TRACER_NAME = '@holdfast/inbox';

/**
 * Spans of the delivery side, after OpenTelemetry's messaging semantic conventions: one
 * `process <table>` span (kind CONSUMER) per delivery attempt, and a `retry <table>` or
 * `park <table>` span (operation type `settle`) inside it when the attempt failed. Without
 * `@opentelemetry/api` (an optional peer, the application's own copy loaded on first use) there
 * are none; with the API and no SDK they are the API's no-op spans.
 */
export class DeliveryTracing {
  private tracer?: Tracer | null;
  /** The table, and the process span's name, read once (they do not change). */
  private destinationName?: string;
  private processName?: string;

  constructor(private readonly table: () => string) {}

  private destination(): string {
    return (this.destinationName ??= this.table());
  }

  private get api(): OpenTelemetryPropagationApi | null {
    return openTelemetryApi<OpenTelemetryPropagationApi>();
  }

  /**
   * A delivery attempt's span: undefined without the API, and while no SDK is registered (the
   * API's span would record nothing, and nothing is made a child of it). `carried`: the accepting
   * context stored with the message (TRACE_CONTEXT): the span is its child, and links to it as the
   * conventions ask of a process span (the link stays when a backend re-roots long traces).
   */
  process(id: string, retries: number, carried?: string): Span | undefined {
    const otel = this.api;
    if (!otel || !tracerRegistered(otel, TRACER_NAME)) return undefined;
    this.tracer ??= otel.trace.getTracer(TRACER_NAME);
    const destination = this.destination();
    const parent =
      carried === undefined ? undefined : extractTraceContext(otel, otel.context.active(), carried);
    const creation = parent === undefined ? undefined : otel.trace.getSpanContext(parent);
    return this.tracer.startSpan(
      (this.processName ??= `process ${destination}`),
      {
        kind: SPAN_KIND.CONSUMER,
        attributes: {
          'messaging.system': MESSAGING_SYSTEM,
          'messaging.operation.type': 'process',
          'messaging.operation.name': 'process',
          'messaging.destination.name': destination,
          'messaging.message.id': id,
          // Attempts before this one (the seed's RETRIES).
          'messaging.holdfast.retries': retries,
        },
        ...(creation ? { links: [{ context: creation }] } : {}),
      },
      creation ? parent : undefined,
    );
  }

  /**
   * Runs the handler's call with the attempt's span as the active context, so that the spans the
   * handler starts (its HTTP calls, its queries) are the delivery's children; as it is without a
   * span.
   */
  within<R>(span: Span | undefined, call: () => R): R {
    const otel = span && this.api;
    if (!otel) return call();
    return otel.context.with(otel.trace.setSpan(otel.context.active(), span), call);
  }

  /** The attempt failed: its span records the error, and the settle span says retry or park. */
  failed(
    span: Span | undefined,
    id: string,
    error: unknown,
    outcome: { delay: number | undefined; parked: boolean },
  ): void {
    const otel = this.api;
    if (!span || !otel || !this.tracer) return;
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({
      code: SPAN_STATUS_CODE_ERROR,
      message: error instanceof Error ? error.message : String(error),
    });
    const destination = this.destination();
    const name = outcome.parked ? 'park' : 'retry';
    const settle = this.tracer.startSpan(
      `${name} ${destination}`,
      {
        kind: SPAN_KIND.CLIENT,
        attributes: {
          'messaging.system': MESSAGING_SYSTEM,
          'messaging.operation.type': 'settle',
          'messaging.operation.name': name,
          'messaging.destination.name': destination,
          'messaging.message.id': id,
          ...(outcome.delay !== undefined ? { 'messaging.holdfast.retry_delay_ms': outcome.delay } : {}),
        },
      },
      otel.trace.setSpan(otel.context.active(), span),
    );
    settle.end();
  }
}
