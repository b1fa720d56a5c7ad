import type { SqlClient } from '../database/sql-client';
import { sqlErrorCode } from '../database/sql-errors';
import { SchemaLockTimeoutError } from '../errors/holdfast.error';
import {
  sqliteAffinity,
  type LiveColumn,
  type LiveColumnKind,
  type SqliteAffinity,
} from '../schema/live-table';
import { catalogRows, splitTable, type CatalogIndex, type SchemaLockSpec } from './catalog';
import type { CatalogQuery } from './sql-dialect';

function sqliteKind(declared: string, affinity: SqliteAffinity): LiveColumnKind {
  const t = declared.toUpperCase();
  switch (affinity) {
    case 'INTEGER':
      return t.includes('BIGINT') ? 'bigint' : 'int';
    case 'TEXT':
      if (/VARCHAR|VARYING/.test(t)) return 'varchar';
      return /\bN?CHAR(ACTER)?\b/.test(t) ? 'char' : 'text';
    case 'BLOB':
      return 'blob';
    case 'NUMERIC':
      return /DATE|TIME/.test(t) ? 'timestamp' : 'other';
    default:
      return 'other';
  }
}

/** A table's columns from `pragma_table_info`; none when the table does not exist. */
export async function sqliteColumns(run: CatalogQuery, table: string): Promise<LiveColumn[]> {
  const { schema, name } = splitTable(table);
  const rows = await catalogRows<Record<string, unknown>>(
    run,
    `SELECT name, type, "notnull" AS not_null, dflt_value AS dflt FROM pragma_table_info(?${schema ? ', ?' : ''}) ORDER BY cid`,
    schema ? [name, schema] : [name],
  );
  return rows.map((r) => {
    const declared = String(r.type ?? '');
    const affinity = sqliteAffinity(declared);
    const dflt = r.dflt === null || r.dflt === undefined ? undefined : String(r.dflt);
    return {
      name: String(r.name),
      rawType: declared === '' ? '(no type)' : declared,
      kind: sqliteKind(declared, affinity),
      // SQLite stores text of any length whatever the declaration says.
      length: undefined,
      affinity,
      nullable: Number(r.not_null) === 0,
      hasDefault: dflt !== undefined && dflt.toUpperCase() !== 'NULL',
    };
  });
}

/** A table's indexes from `sqlite_master` and `pragma_index_info`; none when the table does not exist. */
export async function sqliteIndexes(run: CatalogQuery, table: string): Promise<CatalogIndex[]> {
  const { schema, name } = splitTable(table);
  const p = schema ? `${schema}.` : '';
  const rows = await catalogRows<{ name: string }>(
    run,
    `SELECT name FROM ${p}sqlite_master WHERE type = 'index' AND lower(tbl_name) = lower(?)`,
    [name],
  );
  const indexes: CatalogIndex[] = [];
  for (const r of rows) {
    const columns = await catalogRows<{ name: string | null; seqno: unknown }>(
      run,
      `SELECT name, seqno FROM pragma_index_info(?)`,
      [r.name],
    );
    const first = columns.find((c) => Number(c.seqno) === 0)?.name;
    indexes.push({ name: String(r.name), leading: first ? String(first).toLowerCase() : undefined });
  }
  return indexes;
}

/** True when the table exists, by `sqlite_master`. */
export async function sqliteTableExists(run: CatalogQuery, table: string): Promise<boolean> {
  const { schema, name } = splitTable(table);
  const rows = await catalogRows(
    run,
    `SELECT 1 FROM ${schema ? `${schema}.` : ''}sqlite_master WHERE type = 'table' AND lower(name) = lower(?)`,
    [name],
  );
  return rows.length > 0;
}

/** The schema step under the database's write lock (`BEGIN IMMEDIATE`), held until it commits. */
export function sqliteSchemaLock<T>(
  sql: SqlClient,
  lock: SchemaLockSpec,
  step: (locked: SqlClient) => Promise<T>,
): Promise<T> {
  return sql
    .transaction((tx) => step(tx))
    .catch((error: unknown) => {
      if (sqlErrorCode(error) !== 'SQLITE_BUSY') throw error;
      const busy = (sql.dataSource.options as { timeout?: number }).timeout ?? 5_000;
      throw new SchemaLockTimeoutError(
        lock.table,
        busy,
        `SQLite write lock: another connection keeps a write transaction open; the wait is the DataSource's 'timeout'.`,
        error,
      );
    });
}
