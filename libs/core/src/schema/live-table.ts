import type { SqlClient } from '../database/sql-client';
import type { Dialect } from '../dialect/dialect';
import type { CatalogQuery, ColumnType } from '../dialect/sql-dialect';
import type { TimestampStorage } from '../dialect/timestamp-sql';

/** A live column's logical kind; 'other' for anything Holdfast never uses (REAL, ENUM, JSON...). */
export type LiveColumnKind = ColumnType['kind'] | 'other';

/** SQLite's type affinity, from the declared type by SQLite's own rules (datatype3.html §3.1). */
export type SqliteAffinity = 'INTEGER' | 'TEXT' | 'BLOB' | 'REAL' | 'NUMERIC';

/** One column of a live table, as the database describes it. */
export interface LiveColumn {
  /** The name as the database stores it. */
  readonly name: string;
  /** The type as the database reports it: `character varying(128)`, `bigint(20) unsigned`, `CHAR(32)`. */
  readonly rawType: string;
  readonly kind: LiveColumnKind;
  /**
   * varchar/char: the longest value the database enforces, in characters. Undefined when it
   * enforces none (PostgreSQL `varchar` without length, every SQLite column).
   */
  readonly length?: number;
  /** Fractional-second digits of a timestamp column, where the database reports them. */
  readonly precision?: number;
  /** SQLite only: the column's affinity, which decides what it can store. */
  readonly affinity?: SqliteAffinity;
  /**
   * MySQL/MariaDB timestamp columns only: which of the dialect's two timestamp forms the column
   * has (`DATETIME` or `TIMESTAMP`), for `SqlDialect.timestampSql(storage)`.
   */
  readonly timestampStorage?: TimestampStorage;
  readonly nullable: boolean;
  /** True when the column has a default other than NULL. */
  readonly hasDefault: boolean;
}

/** What a module's table looks like in the database, read at startup by `SchemaManager.apply`. */
export class LiveTable {
  private readonly byName: ReadonlyMap<string, LiveColumn>;

  constructor(
    /** The prefixed table name. */
    readonly table: string,
    /** False when the table does not exist (possible only in schema mode 'none'). */
    readonly exists: boolean,
    columns: readonly LiveColumn[],
    /** False where Holdfast cannot read the catalog (SQL Server, Oracle): columns come from the spec. */
    readonly verified = true,
  ) {
    this.byName = new Map(columns.map((c) => [c.name.toLowerCase(), c]));
  }

  /** Every column, by lower-cased name. */
  get columns(): ReadonlyMap<string, LiveColumn> {
    return this.byName;
  }

  /** The column of that name, any case. */
  column(name: string): LiveColumn | undefined {
    return this.byName.get(name.toLowerCase());
  }

  has(name: string): boolean {
    return this.byName.has(name.toLowerCase());
  }
}

/** SQLite's affinity rules, in SQLite's order. */
export function sqliteAffinity(declared: string): SqliteAffinity {
  const t = declared.toUpperCase();
  if (t.includes('INT')) return 'INTEGER';
  if (t.includes('CHAR') || t.includes('CLOB') || t.includes('TEXT')) return 'TEXT';
  if (t.includes('BLOB') || t.trim() === '') return 'BLOB';
  if (t.includes('REAL') || t.includes('FLOA') || t.includes('DOUB')) return 'REAL';
  return 'NUMERIC';
}

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

/** The affinities a SQLite column may have to hold values of a logical type as Holdfast binds them. */
export function sqliteAffinitiesFor(kind: ColumnType['kind']): readonly SqliteAffinity[] {
  switch (kind) {
    case 'int':
    case 'bigint':
      return ['INTEGER'];
    case 'varchar':
    case 'char':
    case 'text':
      return ['TEXT'];
    case 'blob':
      return ['BLOB'];
    case 'timestamp':
      // ISO-8601 text: TEXT keeps it; NUMERIC (a declared TIMESTAMP/DATETIME) keeps text that is no number.
      return ['TEXT', 'NUMERIC'];
  }
}

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

function optionalNumber(value: unknown): number | undefined {
  if (value === null || value === undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

function split(table: string): { schema?: string; name: string } {
  const dot = table.lastIndexOf('.');
  return dot < 0 ? { name: table } : { schema: table.slice(0, dot), name: table.slice(dot + 1) };
}

/**
 * Reads a table's columns from the catalog: information_schema.columns on PostgreSQL and
 * MySQL/MariaDB, `pragma_table_info` on SQLite. Returns no columns when the table does not exist.
 * Undefined for dialects Holdfast does not execute.
 */
export function readLiveColumns(sql: SqlClient, table: string): Promise<LiveColumn[] | undefined> {
  return readCatalogColumns(sql.dialect.name, (text, params) => sql.query(text, params), table);
}

/** `readLiveColumns` through a bare query function (a TypeORM QueryRunner's `query` will do). */
export async function readCatalogColumns(
  dialect: Dialect,
  run: CatalogQuery,
  table: string,
): Promise<LiveColumn[] | undefined> {
  const { schema, name } = split(table);
  const query = async <T>(text: string, params: unknown[]) => (await run(text, params)) as T[];
  switch (dialect) {
    case 'postgres': {
      const rows = await query<Record<string, unknown>>(
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
    case 'mysql':
    case 'mariadb': {
      const rows = await query<Record<string, unknown>>(
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
    case 'sqlite': {
      const rows = await query<Record<string, unknown>>(
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
    default:
      return undefined;
  }
}

/** An index of a live table as the catalog lists it. */
export interface CatalogIndex {
  name: string;
  /** Its first key column, lower case; undefined when that is an expression. */
  leading?: string;
}

/**
 * Reads a table's indexes from the catalog: `pg_indexes` on PostgreSQL,
 * information_schema.statistics on MySQL/MariaDB, `sqlite_master` and `pragma_index_info` on
 * SQLite. None when the table does not exist; undefined for dialects Holdfast does not execute.
 * The one index reader of core: `readIndexNamed` and `SchemaManager.indexExists` ask it.
 */
export async function readCatalogIndexes(
  dialect: Dialect,
  run: CatalogQuery,
  table: string,
): Promise<CatalogIndex[] | undefined> {
  const { schema, name } = split(table);
  switch (dialect) {
    case 'postgres': {
      const rows = (await run(
        `SELECT indexname, indexdef FROM pg_indexes WHERE lower(tablename) = lower($1) ` +
          `AND schemaname = ${schema ? 'lower($2)' : 'current_schema()'}`,
        schema ? [name, schema] : [name],
      )) as Array<{ indexname: string; indexdef: string }>;
      return rows.map((r) => ({
        name: String(r.indexname),
        leading: postgresLeadingColumn(String(r.indexdef)),
      }));
    }
    case 'mysql':
    case 'mariadb': {
      const rows = (await run(
        `SELECT INDEX_NAME, COLUMN_NAME, SEQ_IN_INDEX FROM information_schema.statistics ` +
          `WHERE table_name = ? AND table_schema = ${schema ? '?' : 'DATABASE()'}`,
        schema ? [name, schema] : [name],
      )) as Array<{ INDEX_NAME: string; COLUMN_NAME: string | null; SEQ_IN_INDEX: unknown }>;
      const indexes = new Map<string, CatalogIndex>();
      for (const r of rows) {
        const index = indexes.get(r.INDEX_NAME) ?? { name: String(r.INDEX_NAME) };
        indexes.set(r.INDEX_NAME, index);
        // A functional key part has no column name (MySQL 8).
        if (Number(r.SEQ_IN_INDEX) === 1 && r.COLUMN_NAME)
          index.leading = String(r.COLUMN_NAME).toLowerCase();
      }
      return [...indexes.values()];
    }
    case 'sqlite': {
      const p = schema ? `${schema}.` : '';
      const rows = (await run(
        `SELECT name FROM ${p}sqlite_master WHERE type = 'index' AND lower(tbl_name) = lower(?)`,
        [name],
      )) as Array<{ name: string }>;
      const indexes: CatalogIndex[] = [];
      for (const r of rows) {
        const columns = (await run(`SELECT name, seqno FROM pragma_index_info(?)`, [r.name])) as Array<{
          name: string | null;
          seqno: unknown;
        }>;
        const first = columns.find((c) => Number(c.seqno) === 0)?.name;
        indexes.push({ name: String(r.name), leading: first ? String(first).toLowerCase() : undefined });
      }
      return indexes;
    }
    default:
      return undefined;
  }
}

/** The first key column of a PostgreSQL index definition (`... USING btree ("A", b)` → `a`). */
function postgresLeadingColumn(definition: string): string | undefined {
  const match = / USING \w+ \(\s*("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)\s*[,)]/.exec(definition);
  if (!match) return undefined;
  const column = match[1].startsWith('"') ? match[1].slice(1, -1).replace(/""/g, '"') : match[1];
  return column.toLowerCase();
}

/**
 * True when `table` has an index named exactly `index` (any case), by the catalog; undefined for
 * dialects Holdfast does not execute. Unlike `SchemaManager.indexExists`, an index of another name
 * on the same columns does not count: this is for hints that name the index (`FORCE INDEX`).
 */
export async function readIndexNamed(
  dialect: Dialect,
  run: CatalogQuery,
  table: string,
  index: string,
): Promise<boolean | undefined> {
  const wanted = index.toLowerCase();
  return (await readCatalogIndexes(dialect, run, table))?.some((i) => i.name.toLowerCase() === wanted);
}
