import type { OpenTelemetryPropagationApi } from '@holdfast/core/kit';

/**
 * The accepting context as `<prefix>COR_MESSAGE.TRACE_CONTEXT` holds it: the carrier the
 * application's global propagator writes (with the SDK's default one, W3C `traceparent` and
 * `tracestate`), as a JSON object of text headers. Undefined when the propagator wrote nothing
 * (no SDK, no propagator, or a context without a valid span).
 */
export function injectTraceContext(otel: OpenTelemetryPropagationApi, context: unknown): string | undefined {
  const carrier: Record<string, string> = {};
  otel.propagation.inject(context, carrier);
  return Object.keys(carrier).length ? JSON.stringify(carrier) : undefined;
}

/**
 * The context a stored carrier describes, on top of `context`; undefined for a value that is not
 * such a carrier (written by hand, cut, or by another tool): a delivery never fails over it.
 */
export function extractTraceContext(
  otel: OpenTelemetryPropagationApi,
  context: unknown,
  stored: string,
): unknown {
  let carrier: unknown;
  try {
    carrier = JSON.parse(stored);
  } catch {
    return undefined;
  }
  if (carrier === null || typeof carrier !== 'object' || Array.isArray(carrier)) return undefined;
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(carrier)) if (typeof value === 'string') headers[key] = value;
  return otel.propagation.extract(context, headers);
}
