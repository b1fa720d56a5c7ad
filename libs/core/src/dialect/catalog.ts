import type { CatalogQuery } from './sql-dialect';

/** An index of a live table as the catalog lists it. */
export interface CatalogIndex {
  name: string;
  /** Its first key column, lower case; undefined when that is an expression. */
  leading?: string;
}

/** The schema step's lock (see `SqlDialect.withSchemaLock`). */
export interface SchemaLockSpec {
  /** The prefixed table the step is for (named in errors). */
  table: string;
  /** The lock's name, the same on every instance for that table. */
  key: string;
  /** How long to wait for another instance's step. */
  timeoutMs: number;
}

/** A table name split into its schema (when qualified, `S.T`) and its own name. */
export function splitTable(table: string): { schema?: string; name: string } {
  const dot = table.lastIndexOf('.');
  return dot < 0 ? { name: table } : { schema: table.slice(0, dot), name: table.slice(dot + 1) };
}

/** `run`'s rows. */
export async function catalogRows<T>(run: CatalogQuery, sql: string, params: unknown[]): Promise<T[]> {
  return (await run(sql, params)) as T[];
}

/** A catalog number (a string from some drivers), or undefined when there is none. */
export function optionalNumber(value: unknown): number | undefined {
  if (value === null || value === undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}
