import { StatementBinder } from '../database/statement';
import type { SqlDialect } from '../dialect/sql-dialect';
import { sqliteAffinity, type SqliteAffinity } from '../dialect/sqlite-affinity';
import { splitTable, type CatalogIndex, type CatalogQuery, type CatalogReader } from './catalog-reader';
import type { LiveColumn, LiveColumnKind } from './live-table';

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

/**
 * SQLite's catalog: columns from `pragma_table_info`, indexes from `sqlite_master` and
 * `pragma_index_info`, tables from `sqlite_master` (of the attached schema a name qualifies).
 */
export function sqliteCatalog(dialect: Pick<SqlDialect, 'placeholder'>, run: CatalogQuery): CatalogReader {
  return {
    columns: async (table) => {
      const { schema, name } = splitTable(table);
      const b = new StatementBinder(dialect);
      const args = schema ? `${b.bind(name)}, ${b.bind(schema)}` : b.bind(name);
      const rows = (await run(
        b.statement(
          `SELECT name, type, "notnull" AS not_null, dflt_value AS dflt FROM pragma_table_info(${args}) ORDER BY cid`,
        ),
      )) as Record<string, unknown>[];
      return rows.map(sqliteColumn);
    },
    indexes: async (table) => {
      const { schema, name } = splitTable(table);
      const b = new StatementBinder(dialect);
      const rows = (await run(
        b.statement(
          `SELECT name FROM ${schema ? `${schema}.` : ''}sqlite_master WHERE type = 'index' AND lower(tbl_name) = lower(${b.bind(name)})`,
        ),
      )) as { name: string }[];
      const indexes: CatalogIndex[] = [];
      for (const r of rows) {
        const i = new StatementBinder(dialect);
        const columns = (await run(
          i.statement(`SELECT name, seqno FROM pragma_index_info(${i.bind(r.name)})`),
        )) as { name: string | null; seqno: unknown }[];
        const first = columns.find((c) => Number(c.seqno) === 0)?.name;
        indexes.push({ name: String(r.name), leading: first ? String(first).toLowerCase() : undefined });
      }
      return indexes;
    },
    tableExists: async (table) => {
      const { schema, name } = splitTable(table);
      const b = new StatementBinder(dialect);
      const rows = await run(
        b.statement(
          `SELECT 1 FROM ${schema ? `${schema}.` : ''}sqlite_master WHERE type = 'table' AND lower(name) = lower(${b.bind(name)})`,
        ),
      );
      return rows.length > 0;
    },
    tableNames: async () => {
      const rows = (await run(
        new StatementBinder(dialect).statement(`SELECT name FROM sqlite_master WHERE type = 'table'`),
      )) as { name: unknown }[];
      return rows.map((r) => String(r.name));
    },
  };
}

/** One row of `pragma_table_info` as a LiveColumn. */
function sqliteColumn(r: Record<string, unknown>): LiveColumn {
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
}
