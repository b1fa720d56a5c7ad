import { ColumnType } from '../dialect/sql-dialect';

export interface ColumnSpec {
  name: string;
  /** The type Holdfast's own DDL creates. */
  type: ColumnType;
  /**
   * Other live types the code also works with, e.g. a seed system's `TIMESTAMP` where Holdfast's
   * DDL has `BIGINT`, or `CHAR(32)` for a `VARCHAR(128)`. The startup check accepts `type` or any
   * of these; DDL always uses `type`.
   */
  accept?: readonly ColumnType[];
  /**
   * For `varchar`/`char` types: the shortest live length accepted, for `type` and every `accept`
   * entry alike. Default: each type's own length (a live column may be longer, never shorter).
   */
  minLength?: number;
  /**
   * An extra column the module detects and uses when present: a live table without it passes
   * the check (and `LiveTable.has(name)` says false). It is still part of Holdfast's own DDL.
   */
  optional?: boolean;
  nullable?: boolean;
  /** A literal SQL default (a number or a quoted string); never user input. */
  default?: string | number;
}

export interface IndexSpec {
  /** Index name without the table prefix; it is prefixed like the table. */
  name: string;
  columns: readonly string[];
}

/** One table a module owns, described once and rendered to DDL for every dialect. */
export interface TableSpec {
  /** Table name without prefix, e.g. 'FAILOVER_STORE'. */
  name: string;
  columns: readonly ColumnSpec[];
  primaryKey: readonly string[];
  indexes?: readonly IndexSpec[];
  /**
   * PostgreSQL: the share of each page, in percent (10–100), that inserts fill when Holdfast
   * creates the table; the rest stays free for updates. An update that changes no indexed column
   * and finds room on the row's own page is a HOT update: no index entry is written, and the
   * old version is reclaimed by the next visitor of the page. For a queue whose rows are updated
   * once or twice and then deleted. Other databases: ignored (InnoDB and Oracle update in place).
   * Never checked on a live table, never changed on one (see the lib's operations notes).
   */
  fillFactor?: number;
}
