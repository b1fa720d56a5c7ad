import type { NewMessageRow } from '../store/cor-message.rows';
import type { AcceptTracing } from '../tracing/accept-tracing';

/**
 * Runs one accept or acceptAll call inside its `send` span (see AcceptTracing); with
 * `traceContext` on, every row keeps the span's context.
 */
export function inSendSpan<R>(
  tracing: AcceptTracing,
  rows: readonly NewMessageRow[],
  run: () => Promise<R>,
): Promise<R> {
  return tracing.send(
    rows.map((r) => r.id),
    (carried) => {
      if (carried !== undefined) for (const row of rows) row.traceContext = carried;
      return run();
    },
  );
}
