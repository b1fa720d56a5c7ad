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
}
