import { createHash } from 'node:crypto';
import type { SqlClient } from '../database/sql-client';
import { sqlErrorCode } from '../database/sql-errors';
import { SchemaLockTimeoutError } from '../errors/holdfast.error';
import type { LiveColumn, LiveColumnKind } from '../schema/live-table';
import { catalogRows, optionalNumber, splitTable, type CatalogIndex, type SchemaLockSpec } from './catalog';
import type { CatalogQuery } from './sql-dialect';

function postgresKind(dataType: string): LiveColumnKind {
  switch (dataType) {
    case 'character varying':
      return 'varchar';
    case 'character':
      return 'char';
    case 'text':
      return 'text';
    case 'bytea':
      return 'blob';
    case 'bigint':
      return 'bigint';
    case 'integer':
      return 'int';
    case 'timestamp with time zone':
      return 'timestamp';
    default:
      // Includes `timestamp without time zone`: node-postgres binds a Date with the process's
      // offset, which such a column drops, so it would store local wall-clock times.
      return 'other';
  }
}

/** A table's columns from information_schema.columns; none when the table does not exist. */
export async function postgresColumns(run: CatalogQuery, table: string): Promise<LiveColumn[]> {
  const { schema, name } = splitTable(table);
  const rows = await catalogRows<Record<string, unknown>>(
    run,
    `SELECT column_name AS name, data_type AS data_type, character_maximum_length AS length,
            datetime_precision AS precision, is_nullable AS nullable, column_default AS dflt
       FROM information_schema.columns
      WHERE lower(table_name) = lower($1) AND table_schema = ${schema ? 'lower($2)' : 'current_schema()'}
      ORDER BY ordinal_position`,
    schema ? [name, schema] : [name],
  );
  return rows.map((r) => {
    const dataType = String(r.data_type);
    const kind = postgresKind(dataType);
    const length = optionalNumber(r.length);
    const precision = kind === 'timestamp' ? optionalNumber(r.precision) : undefined;
    return {
      name: String(r.name),
      rawType:
        length !== undefined
          ? `${dataType}(${length})`
          : precision !== undefined && precision !== 6
            ? dataType.replace(/^timestamp/, `timestamp(${precision})`)
            : dataType,
      kind,
      length,
      precision,
      nullable: r.nullable === 'YES',
      hasDefault: r.dflt !== null && r.dflt !== undefined && !/^NULL(::.*)?$/i.test(String(r.dflt)),
    };
  });
}

/** A table's indexes from `pg_indexes`; none when the table does not exist. */
export async function postgresIndexes(run: CatalogQuery, table: string): Promise<CatalogIndex[]> {
  const { schema, name } = splitTable(table);
  const rows = await catalogRows<{ indexname: string; indexdef: string }>(
    run,
    `SELECT indexname, indexdef FROM pg_indexes WHERE lower(tablename) = lower($1) ` +
      `AND schemaname = ${schema ? 'lower($2)' : 'current_schema()'}`,
    schema ? [name, schema] : [name],
  );
  return rows.map((r) => ({
    name: String(r.indexname),
    leading: postgresLeadingColumn(String(r.indexdef)),
  }));
}

/** The first key column of a PostgreSQL index definition (`... USING btree ("A", b)` → `a`). */
function postgresLeadingColumn(definition: string): string | undefined {
  const match = / USING \w+ \(\s*("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)\s*[,)]/.exec(definition);
  if (!match) return undefined;
  const column = match[1].startsWith('"') ? match[1].slice(1, -1).replace(/""/g, '"') : match[1];
  return column.toLowerCase();
}

/** True when the table exists, by information_schema.tables. */
export async function postgresTableExists(run: CatalogQuery, table: string): Promise<boolean> {
  const { schema, name } = splitTable(table);
  const rows = await catalogRows(
    run,
    `SELECT 1 FROM information_schema.tables WHERE lower(table_name) = lower($1) AND table_schema = ${schema ? 'lower($2)' : 'current_schema()'}`,
    schema ? [name, schema] : [name],
  );
  return rows.length > 0;
}

/**
 * The schema step under `pg_advisory_xact_lock` in a transaction (works behind PgBouncer in
 * transaction mode), its wait bounded by `lock_timeout`.
 */
export function postgresSchemaLock<T>(
  sql: SqlClient,
  lock: SchemaLockSpec,
  step: (locked: SqlClient) => Promise<T>,
): Promise<T> {
  return sql.transaction(async (tx) => {
    // Bounds the lock wait (and the DDL's own lock waits) for this transaction only.
    await tx.query(`SELECT set_config('lock_timeout', $1, true)`, [`${lock.timeoutMs}ms`]);
    try {
      await tx.query('SELECT pg_advisory_xact_lock(CAST($1 AS BIGINT))', [advisoryKey(lock.key)]);
    } catch (error) {
      if (sqlErrorCode(error) === '55P03') {
        throw new SchemaLockTimeoutError(
          lock.table,
          lock.timeoutMs,
          `PostgreSQL advisory lock ${advisoryKey(lock.key)}: see pg_locks WHERE locktype = 'advisory'.`,
          error,
        );
      }
      throw error;
    }
    return step(tx);
  });
}

/** A signed 64-bit advisory-lock key for a name (the first 8 bytes of its SHA-256). */
function advisoryKey(name: string): string {
  return createHash('sha256').update(name).digest().readBigInt64BE(0).toString();
}
