import type { ColumnType, SqlDialect } from '../dialect/sql-dialect';
import { SchemaMismatchError } from '../errors/holdfast.error';
import { sqliteAffinitiesFor } from '../dialect/sqlite-affinity';
import type { LiveColumn, LiveTable } from './live-table';
import type { ColumnSpec, TableSpec } from './table-spec';

/** Every type a spec column accepts: its own, then its `accept` list. */
export function acceptedTypes(column: ColumnSpec): readonly ColumnType[] {
  return [column.type, ...(column.accept ?? [])];
}

function hasLength(type: ColumnType): type is Extract<ColumnType, { length: number }> {
  return type.kind === 'varchar' || type.kind === 'char';
}

/** True when a live column can hold what Holdfast writes for `candidate`. */
export function liveColumnMatches(
  live: LiveColumn,
  candidate: ColumnType,
  column: Pick<ColumnSpec, 'minLength'>,
): boolean {
  if (live.affinity !== undefined) {
    // SQLite: what matters is the affinity, as SQLite itself decides it; lengths are not enforced.
    return sqliteAffinitiesFor(candidate.kind).includes(live.affinity);
  }
  if (live.kind !== candidate.kind) return false;
  if (!hasLength(candidate) || live.length === undefined) return true;
  return live.length >= (column.minLength ?? candidate.length);
}

/** One accepted type, as the message shows it: in the dialect's DDL, with its length rule. */
function describeAccepted(dialect: SqlDialect, candidate: ColumnType, column: ColumnSpec): string {
  const affinities = dialect.columnAffinities(candidate.kind);
  if (affinities) return `${dialect.columnType(candidate)} (${affinities.join(' or ')} affinity)`;
  if (!hasLength(candidate)) return dialect.columnType(candidate);
  const min = column.minLength ?? candidate.length;
  return `${dialect.columnType({ ...candidate, length: min })} or longer`;
}

function describeAll(dialect: SqlDialect, accepted: readonly ColumnType[], column: ColumnSpec): string[] {
  return [...new Set(accepted.map((t) => describeAccepted(dialect, t, column)))];
}

function describeFound(live: LiveColumn): string {
  return live.affinity ? `${live.rawType} (${live.affinity} affinity)` : live.rawType;
}

/**
 * Checks every column of `spec` against the live table, and throws a SchemaMismatchError for the
 * first missing (and not optional) column or the first column of a type the module cannot use.
 */
export function checkLiveTable(dialect: SqlDialect, spec: TableSpec, live: LiveTable): void {
  if (!live.verified) return;
  const fromDdl = `create the table from Holdfast's DDL (\`holdfast migrate\` or \`holdfast ddl --dialect ${dialect.name}\` from @holdfast/cli)`;
  for (const column of spec.columns) {
    const found = live.column(column.name);
    const accepted = acceptedTypes(column);
    if (!found) {
      if (column.optional) continue;
      throw new SchemaMismatchError(
        live.table,
        column.name,
        undefined,
        describeAll(dialect, accepted, column),
        `Holdfast never alters an existing table: add the column (ALTER TABLE ${live.table} ADD COLUMN ` +
          `${column.name} ${dialect.columnType(column.type)}), or ${fromDdl}.`,
      );
    }
    if (!accepted.some((t) => liveColumnMatches(found, t, column))) {
      throw new SchemaMismatchError(
        live.table,
        column.name,
        describeFound(found),
        describeAll(dialect, accepted, column),
        `Holdfast never alters an existing table: change the column to an accepted type, or ${fromDdl}.`,
      );
    }
  }
}
