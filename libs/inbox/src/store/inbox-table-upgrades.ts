import type { ColumnSpec, Dialect, IndexSpec, SqlDialect } from '@holdfast/core/kit';
import { corMessageConversionSql, hasEpochMillisLayout } from './cor-message.conversion';
import { addPriorityColumnSql, COR_MESSAGE_PRIORITY_INDEX } from './cor-message.priority';
import { addTypeIndexSql, COR_MESSAGE_TYPE_INDEX } from './cor-message.fair-share';
import { TRACE_CONTEXT_COLUMN } from './cor-message.trace-context';

/**
 * What a `<prefix>COR_MESSAGE` created by an earlier layout needs to reach this one, beside the
 * tables of `INBOX_TABLES` (which new installs create whole): for Holdfast's migrations
 * (`@holdfast/cli/migrations`) and for an application's own migration tool that writes them again.
 *
 * - `epochMillisTimes`: Holdfast's previous BIGINT epoch-ms layout; `applies` reads the catalog
 *   (`query` returns rows, as a TypeORM QueryRunner's), `sql` converts it keeping every message.
 * - `traceContext`: the nullable column the option `traceContext` reads and writes.
 * - `priority`: the column and index of the option `priorities` (`sql` adds both; `index` names the index).
 * - `typeIndex`: the index of the option `fairShare` (`sql` creates it; `index` names it).
 */
export const INBOX_TABLE_UPGRADES: {
  readonly epochMillisTimes: {
    readonly applies: (
      dialect: Dialect,
      query: (sql: string, params?: unknown[]) => Promise<unknown>,
      prefix?: string,
    ) => Promise<boolean>;
    readonly sql: (dialect: Dialect, prefix?: string) => string[];
  };
  readonly traceContext: { readonly column: ColumnSpec };
  readonly priority: {
    readonly sql: (dialect: SqlDialect, prefix: string) => string[];
    readonly index: IndexSpec;
  };
  readonly typeIndex: {
    readonly sql: (dialect: SqlDialect, prefix: string) => string[];
    readonly index: IndexSpec;
  };
} = Object.freeze({
  epochMillisTimes: Object.freeze({ applies: hasEpochMillisLayout, sql: corMessageConversionSql }),
  traceContext: Object.freeze({ column: TRACE_CONTEXT_COLUMN }),
  priority: Object.freeze({ sql: addPriorityColumnSql, index: COR_MESSAGE_PRIORITY_INDEX }),
  typeIndex: Object.freeze({ sql: addTypeIndexSql, index: COR_MESSAGE_TYPE_INDEX }),
});
