import type { SqlClient } from '../database/sql-client';
import { SchemaLockTimeoutError } from '../errors/holdfast.error';
import type { LiveColumn, LiveColumnKind } from '../schema/live-table';
import { catalogRows, optionalNumber, splitTable, type CatalogIndex, type SchemaLockSpec } from './catalog';
import type { CatalogQuery } from './sql-dialect';

function mysqlKind(dataType: string): LiveColumnKind {
  switch (dataType) {
    case 'varchar':
      return 'varchar';
    case 'char':
      return 'char';
    case 'tinytext':
    case 'text':
    case 'mediumtext':
    case 'longtext':
      return 'text';
    case 'tinyblob':
    case 'blob':
    case 'mediumblob':
    case 'longblob':
      return 'blob';
    case 'bigint':
      return 'bigint';
    case 'int':
      return 'int';
    case 'datetime':
    case 'timestamp':
      return 'timestamp';
    default:
      return 'other';
  }
}

/** A table's columns from information_schema.columns; none when the table does not exist. */
export async function mysqlColumns(run: CatalogQuery, table: string): Promise<LiveColumn[]> {
  const { schema, name } = splitTable(table);
  const rows = await catalogRows<Record<string, unknown>>(
    run,
    `SELECT COLUMN_NAME AS name, DATA_TYPE AS data_type, COLUMN_TYPE AS column_type,
            CHARACTER_MAXIMUM_LENGTH AS length, DATETIME_PRECISION AS \`precision\`,
            IS_NULLABLE AS nullable, COLUMN_DEFAULT AS dflt
       FROM information_schema.columns
      WHERE table_name = ? AND table_schema = ${schema ? '?' : 'DATABASE()'}
      ORDER BY ORDINAL_POSITION`,
    schema ? [name, schema] : [name],
  );
  return rows.map((r) => {
    const dataType = String(r.data_type).toLowerCase();
    const kind = mysqlKind(dataType);
    // MariaDB reports a NULL default as the text 'NULL' (a string default is quoted).
    const dflt = r.dflt === null || r.dflt === undefined ? undefined : String(r.dflt);
    return {
      name: String(r.name),
      rawType: String(r.column_type),
      kind,
      length: kind === 'varchar' || kind === 'char' ? optionalNumber(r.length) : undefined,
      precision: kind === 'timestamp' ? optionalNumber(r.precision) : undefined,
      timestampStorage:
        kind === 'timestamp' ? (dataType === 'timestamp' ? 'timestamp' : 'datetime') : undefined,
      nullable: r.nullable === 'YES',
      hasDefault: dflt !== undefined && dflt.toUpperCase() !== 'NULL',
    };
  });
}

/** A table's indexes from information_schema.statistics; none when the table does not exist. */
export async function mysqlIndexes(run: CatalogQuery, table: string): Promise<CatalogIndex[]> {
  const { schema, name } = splitTable(table);
  const rows = await catalogRows<{ INDEX_NAME: string; COLUMN_NAME: string | null; SEQ_IN_INDEX: unknown }>(
    run,
    `SELECT INDEX_NAME, COLUMN_NAME, SEQ_IN_INDEX FROM information_schema.statistics ` +
      `WHERE table_name = ? AND table_schema = ${schema ? '?' : 'DATABASE()'}`,
    schema ? [name, schema] : [name],
  );
  const indexes = new Map<string, CatalogIndex>();
  for (const r of rows) {
    const index = indexes.get(r.INDEX_NAME) ?? { name: String(r.INDEX_NAME) };
    indexes.set(r.INDEX_NAME, index);
    // A functional key part has no column name (MySQL 8).
    if (Number(r.SEQ_IN_INDEX) === 1 && r.COLUMN_NAME) index.leading = String(r.COLUMN_NAME).toLowerCase();
  }
  return [...indexes.values()];
}

/** True when the table exists, by information_schema.tables. */
export async function mysqlTableExists(run: CatalogQuery, table: string): Promise<boolean> {
  const { schema, name } = splitTable(table);
  const rows = await catalogRows(
    run,
    `SELECT 1 FROM information_schema.tables WHERE table_name = ? AND table_schema = ${schema ? '?' : 'DATABASE()'}`,
    schema ? [name, schema] : [name],
  );
  return rows.length > 0;
}

/** The schema step under `GET_LOCK` on one connection (a session lock, released after the step). */
export function mysqlSchemaLock<T>(
  sql: SqlClient,
  lock: SchemaLockSpec,
  step: (locked: SqlClient) => Promise<T>,
): Promise<T> {
  return sql.session(async (connection) => {
    // GET_LOCK names are server-wide and at most 64 characters: scope them to the schema.
    const name = `LEFT(CONCAT('holdfast:schema:', SHA1(CONCAT(COALESCE(DATABASE(), ''), '.', ?))), 64)`;
    const [row] = await connection.query<{ got: unknown; lock_name: string }>(
      `SELECT GET_LOCK(${name}, ?) AS got, ${name} AS lock_name`,
      [lock.key, Math.ceil(lock.timeoutMs / 1000), lock.key],
    );
    if (Number(row?.got) !== 1) {
      throw new SchemaLockTimeoutError(
        lock.table,
        lock.timeoutMs,
        `MySQL/MariaDB GET_LOCK('${row?.lock_name}'): SELECT IS_USED_LOCK('${row?.lock_name}') names the holder's connection.`,
      );
    }
    try {
      return await step(connection);
    } finally {
      await connection.query('SELECT RELEASE_LOCK(?)', [row.lock_name]).catch(() => undefined);
    }
  });
}
