import type { Statement } from '../database/statement';
import type { LiveColumn } from './live-table';

/**
 * Runs one catalog statement and resolves to its rows: `SqlClient.query`, or a TypeORM
 * QueryRunner's `query` where no SqlClient exists (a migration:
 * `(s) => queryRunner.query(s.sql, [...s.params])`).
 */
export type CatalogQuery = (statement: Statement) => Promise<readonly unknown[]>;

/** An index of a live table as the catalog lists it. */
export interface CatalogIndex {
  name: string;
  /** Its first key column, lower case; undefined when that is an expression. */
  leading?: string;
}

/**
 * How one database's catalog is read (information_schema, `pg_indexes`, SQLite's pragmas): its
 * statements and what their rows mean. `table` is a prefixed name, possibly schema-qualified.
 */
export interface CatalogReader {
  /** The table's columns in their order; none when the table does not exist. */
  columns(table: string): Promise<LiveColumn[]>;
  /** The table's indexes; none when the table does not exist. */
  indexes(table: string): Promise<CatalogIndex[]>;
  tableExists(table: string): Promise<boolean>;
  /** The names of the tables in the connection's own schema (database), one statement. */
  tableNames(): Promise<string[]>;
}

/** A table name split into its schema (when qualified, `S.T`) and its own name. */
export function splitTable(table: string): { schema?: string; name: string } {
  const dot = table.lastIndexOf('.');
  return dot < 0 ? { name: table } : { schema: table.slice(0, dot), name: table.slice(dot + 1) };
}

/** A catalog number (a string from some drivers), or undefined when there is none. */
export function optionalNumber(value: unknown): number | undefined {
  if (value === null || value === undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}
