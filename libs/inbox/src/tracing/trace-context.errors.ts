import { HoldfastError } from '@holdfast/core/kit';

/**
 * `traceContext: true` on a `<prefix>COR_MESSAGE` without Holdfast's TRACE_CONTEXT column (a
 * table made by camunda-bpm-correlate's DDL, or by Holdfast before the option): startup stops,
 * naming the column and the migration that adds it.
 */
export class TraceContextColumnMissingError extends HoldfastError {
  constructor(
    readonly table: string,
    readonly migration: string,
  ) {
    super(
      `InboxModule option traceContext: true needs the column TRACE_CONTEXT on ${table}, which it does not have. ` +
        `Run migration ${migration} (npx holdfast migrate), or add it by hand ` +
        `(ALTER TABLE ${table} ADD TRACE_CONTEXT TEXT), or set traceContext: 'when-present' to deliver ` +
        `without the accepting context where the column is missing.`,
      'HOLDFAST_INBOX_TRACE_CONTEXT_COLUMN',
    );
  }
}
