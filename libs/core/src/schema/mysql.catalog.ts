import { StatementBinder } from '../database/statement';
import type { SqlDialect } from '../dialect/sql-dialect';
import {
  optionalNumber,
  splitTable,
  type CatalogIndex,
  type CatalogQuery,
  type CatalogReader,
} from './catalog-reader';
import type { LiveColumn, LiveColumnKind } from './live-table';

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

/**
 * MySQL's and MariaDB's catalog: columns from information_schema.columns, indexes from
 * information_schema.statistics, tables from information_schema.tables, in the table's schema or
 * the connection's `DATABASE()`.
 */
export function mysqlCatalog(dialect: Pick<SqlDialect, 'placeholder'>, run: CatalogQuery): CatalogReader {
  /** `table_name = the table's name AND table_schema = its schema`. */
  const where = (b: StatementBinder, table: string): string => {
    const { schema, name } = splitTable(table);
    const named = `table_name = ${b.bind(name)}`;
    return `${named} AND table_schema = ${schema ? b.bind(schema) : 'DATABASE()'}`;
  };
  return {
    columns: async (table) => {
      const b = new StatementBinder(dialect);
      const rows = (await run(
        b.statement(
          `SELECT COLUMN_NAME AS name, DATA_TYPE AS data_type, COLUMN_TYPE AS column_type,
                  CHARACTER_MAXIMUM_LENGTH AS length, DATETIME_PRECISION AS \`precision\`,
                  IS_NULLABLE AS nullable, COLUMN_DEFAULT AS dflt
             FROM information_schema.columns
            WHERE ${where(b, table)}
            ORDER BY ORDINAL_POSITION`,
        ),
      )) as Record<string, unknown>[];
      return rows.map(mysqlColumn);
    },
    indexes: async (table) => {
      const b = new StatementBinder(dialect);
      const rows = (await run(
        b.statement(
          `SELECT INDEX_NAME, COLUMN_NAME, SEQ_IN_INDEX FROM information_schema.statistics WHERE ${where(b, table)}`,
        ),
      )) as { INDEX_NAME: string; COLUMN_NAME: string | null; SEQ_IN_INDEX: unknown }[];
      const indexes = new Map<string, CatalogIndex>();
      for (const r of rows) {
        const index = indexes.get(r.INDEX_NAME) ?? { name: String(r.INDEX_NAME) };
        indexes.set(r.INDEX_NAME, index);
        // A functional key part has no column name (MySQL 8).
        if (Number(r.SEQ_IN_INDEX) === 1 && r.COLUMN_NAME)
          index.leading = String(r.COLUMN_NAME).toLowerCase();
      }
      return [...indexes.values()];
    },
    tableExists: async (table) => {
      const b = new StatementBinder(dialect);
      const rows = await run(b.statement(`SELECT 1 FROM information_schema.tables WHERE ${where(b, table)}`));
      return rows.length > 0;
    },
    tableNames: async () => {
      const rows = (await run(
        new StatementBinder(dialect).statement(
          `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE()`,
        ),
      )) as Record<string, unknown>[];
      // (MySQL 8 names the column TABLE_NAME whatever the alias's case in some versions)
      return rows.map((r) => String(r.name ?? r.NAME ?? r.TABLE_NAME));
    },
  };
}

/** One row of information_schema.columns as a LiveColumn. */
function mysqlColumn(r: Record<string, unknown>): LiveColumn {
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
}
