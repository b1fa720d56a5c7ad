import {
  openTelemetryApi,
  SPAN_KIND,
  SPAN_STATUS_CODE_ERROR,
  type OpenTelemetryPropagationApi,
  type TraceAttributeValue,
  type TraceTracer as Tracer,
} from '@holdfast/core/kit';
import { MESSAGING_SYSTEM } from './delivery-tracing';
import { injectTraceContext } from './trace-context';

/**
 * The accepting side's span, after OpenTelemetry's messaging semantic conventions: one
 * `send <table>` span (kind PRODUCER, operation type `send`) per `accept` / `acceptAll` call,
 * around its inserts (in the caller's transaction too). With `carry` (the table has
 * TRACE_CONTEXT and `traceContext` is on), the span's context is propagated into each message's
 * row. Without `@opentelemetry/api` there is no span; with the API and no SDK, a no-op one and
 * nothing carried.
 */
export class AcceptTracing {
  private tracer?: Tracer;

  constructor(
    private readonly destination: () => string,
    private readonly carry: () => boolean,
  ) {}

  /** Runs `insert` inside the call's span; `carried` is the context to store with each message. */
  async send<R>(ids: readonly string[], insert: (carried: string | undefined) => Promise<R>): Promise<R> {
    const otel = openTelemetryApi<OpenTelemetryPropagationApi>();
    if (!otel) return insert(undefined);
    this.tracer ??= otel.trace.getTracer('@holdfast/inbox');
    const destination = this.destination();
    const attributes: Record<string, TraceAttributeValue> = {
      'messaging.system': MESSAGING_SYSTEM,
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'send',
      'messaging.destination.name': destination,
    };
    if (ids.length === 1) attributes['messaging.message.id'] = ids[0];
    else attributes['messaging.batch.message_count'] = ids.length;
    const span = this.tracer.startSpan(`send ${destination}`, { kind: SPAN_KIND.PRODUCER, attributes });
    const carry = this.carry();
    if (!span.isRecording() && !carry) {
      span.end();
      return insert(undefined);
    }
    const context = otel.trace.setSpan(otel.context.active(), span);
    try {
      const carried = carry ? injectTraceContext(otel, context) : undefined;
      return await otel.context.with(context, () => insert(carried));
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({
        code: SPAN_STATUS_CODE_ERROR,
        message: error instanceof Error ? error.message : String(error),
      });
      throw error;
    } finally {
      span.end();
    }
  }
}
