import type { ColumnSpec, LiveTable, TableSpec } from '@holdfast/core/kit';
import { TraceContextColumnMissingError } from '../errors';

/** The migration that adds TRACE_CONTEXT to a live `<prefix>COR_MESSAGE`. */
export const TRACE_CONTEXT_MIGRATION = '1764000000410-cor-message-trace-context';

/**
 * `TRACE_CONTEXT`: Holdfast's own nullable column beside the seed's, the accepting trace context
 * (the propagator's carrier as JSON text: W3C `traceparent`/`tracestate`). Not in the seed's
 * DDL and not in Holdfast's unless `traceContext` is on: `schema: 'create'` then makes a new
 * table with it, migration TRACE_CONTEXT_MIGRATION adds it to a live one. A Java reader of the
 * table never selects it.
 */
export const TRACE_CONTEXT_COLUMN: ColumnSpec = {
  name: 'TRACE_CONTEXT',
  type: { kind: 'text' },
  optional: true,
};

/** `<prefix>COR_MESSAGE` as `traceContext` on creates it: with TRACE_CONTEXT. */
export function withTraceContextColumn(spec: TableSpec): TableSpec {
  return { ...spec, columns: [...spec.columns, TRACE_CONTEXT_COLUMN] };
}

/**
 * Whether the inbox carries the accepting context, from the option and the live table:
 * `true` needs the column (TraceContextColumnMissingError at startup without it),
 * `'when-present'` uses it when the table has it and carries nothing otherwise (a seed table),
 * `false` never reads or writes it.
 */
export function carriesTraceContext(option: boolean | 'when-present', live: LiveTable): boolean {
  if (option === false) return false;
  if (live.has(TRACE_CONTEXT_COLUMN.name)) return true;
  if (option === true) throw new TraceContextColumnMissingError(live.table, TRACE_CONTEXT_MIGRATION);
  return false;
}
