import { Injectable } from '@nestjs/common';
import { FAILOVER_SPAN_ATTRIBUTES, withFailoverSpan, type FailoverSpan } from '../tracing/failover-tracer';
import type { CallTrace } from './failover-call';

/**
 * The span of a @Failover call: `failover <name>` when an OpenTelemetry SDK records, its
 * attributes saying the call's outcome, whether the answer is stale and whether it shared
 * another call's attempt (what the call's {@link CallTrace} learned as it ran).
 */
@Injectable()
export class FailoverCallTracing {
  /** Runs `body` inside the call's span; `body` gets a trace to fill only when a span records. */
  traced<T>(name: string, body: (trace: CallTrace | undefined) => Promise<T>): Promise<T> {
    return withFailoverSpan(name, (span) => {
      if (!span) return body(undefined);
      const trace: CallTrace = {};
      return body(trace).then(
        (value) => {
          told(span, trace);
          return value;
        },
        (error: unknown) => {
          told(span, trace);
          throw error;
        },
      );
    });
  }
}

/** The span's attributes from what the call learned. */
function told(span: FailoverSpan, trace: CallTrace): void {
  const { outcome, shared } = trace;
  if (outcome) {
    span.setAttribute(FAILOVER_SPAN_ATTRIBUTES.outcome, outcome);
    if (outcome !== 'failed' && outcome !== 'not-recoverable')
      span.setAttribute(FAILOVER_SPAN_ATTRIBUTES.stale, outcome === 'recovered' || outcome === 'handler');
  }
  if (shared) span.setAttribute(FAILOVER_SPAN_ATTRIBUTES.shared, true);
}
