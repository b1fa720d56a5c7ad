import type { ColumnType } from '../dialect/column-type';
import type { SqliteAffinity } from '../dialect/sqlite-affinity';
import type { TimestampStorage } from '../dialect/timestamp-sql';

/** A live column's logical kind; 'other' for anything Holdfast never uses (REAL, ENUM, JSON...). */
export type LiveColumnKind = ColumnType['kind'] | 'other';

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

/** What a module's table looks like in the database, read at startup by `SchemaManager.apply` (through a `Catalog`). */
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
