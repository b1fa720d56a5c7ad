import { StatementBinder } from '../database/statement';
import type { SqlDialect } from '../dialect/sql-dialect';
import { optionalNumber, splitTable, type CatalogQuery, type CatalogReader } from './catalog-reader';
import type { LiveColumn, LiveColumnKind } from './live-table';

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

/**
 * PostgreSQL's catalog: columns from information_schema.columns, indexes from `pg_indexes`,
 * tables from information_schema.tables, in the table's schema or the `current_schema()`.
 */
export function postgresCatalog(dialect: Pick<SqlDialect, 'placeholder'>, run: CatalogQuery): CatalogReader {
  /** `<name column> = the table's name AND <schema column> = its schema`, case-insensitively. */
  const where = (b: StatementBinder, nameColumn: string, schemaColumn: string, table: string): string => {
    const { schema, name } = splitTable(table);
    const named = `lower(${nameColumn}) = lower(${b.bind(name)})`;
    return `${named} AND ${schemaColumn} = ${schema ? `lower(${b.bind(schema)})` : 'current_schema()'}`;
  };
  return {
    columns: async (table) => {
      const b = new StatementBinder(dialect);
      const rows = (await run(
        b.statement(
          `SELECT column_name AS name, data_type AS data_type, character_maximum_length AS length,
                  datetime_precision AS precision, is_nullable AS nullable, column_default AS dflt
             FROM information_schema.columns
            WHERE ${where(b, 'table_name', 'table_schema', table)}
            ORDER BY ordinal_position`,
        ),
      )) as Record<string, unknown>[];
      return rows.map(postgresColumn);
    },
    indexes: async (table) => {
      const b = new StatementBinder(dialect);
      const rows = (await run(
        b.statement(
          `SELECT indexname, indexdef FROM pg_indexes WHERE ${where(b, 'tablename', 'schemaname', table)}`,
        ),
      )) as { indexname: string; indexdef: string }[];
      return rows.map((r) => ({
        name: String(r.indexname),
        leading: postgresLeadingColumn(String(r.indexdef)),
      }));
    },
    tableExists: async (table) => {
      const b = new StatementBinder(dialect);
      const rows = await run(
        b.statement(
          `SELECT 1 FROM information_schema.tables WHERE ${where(b, 'table_name', 'table_schema', table)}`,
        ),
      );
      return rows.length > 0;
    },
    tableNames: async () => {
      const rows = (await run(
        new StatementBinder(dialect).statement(
          `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()`,
        ),
      )) as { name: unknown }[];
      return rows.map((r) => String(r.name));
    },
  };
}

/** One row of information_schema.columns as a LiveColumn. */
function postgresColumn(r: Record<string, unknown>): LiveColumn {
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
}

/** The first key column of a PostgreSQL index definition (`... USING btree ("A", b)` → `a`). */
function postgresLeadingColumn(definition: string): string | undefined {
  const match = / USING \w+ \(\s*("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)\s*[,)]/.exec(definition);
  if (!match) return undefined;
  const column = match[1].startsWith('"') ? match[1].slice(1, -1).replace(/""/g, '"') : match[1];
  return column.toLowerCase();
}
