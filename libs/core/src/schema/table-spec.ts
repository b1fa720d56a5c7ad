import { ColumnType } from '../dialect/sql-dialect';

export interface ColumnSpec {
  name: string;
  type: ColumnType;
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
