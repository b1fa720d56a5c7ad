import type { Dialect } from './dialect';

/** One bounded DELETE: see `deleteLimited`. */
export interface DeleteLimitedSpec {
  /** Fully prefixed table name (already validated). */
  table: string;
  /** The rows' condition, spliced as is and joined with AND: parenthesize a condition with OR. */
  where: string;
  /** MySQL/MariaDB delete in this order (an indexed column keeps a batch to the rows it deletes). */
  orderBy?: string;
  /** At most this many rows (truncated; at least 1). */
  limit: number;
}

/**
 * One `DELETE` of at most `spec.limit` rows matching `spec.where`, bounded the dialect's way
 * (PostgreSQL by `ctid`, SQLite by `rowid`, MySQL/MariaDB `LIMIT`, SQL Server `TOP`, Oracle
 * `ROWNUM`). PostgreSQL's statement has `where` twice; its `$n` placeholders name the same
 * parameters, so every dialect binds them once.
 */
export function deleteLimited(dialect: { readonly name: Dialect }, spec: DeleteLimitedSpec): string {
  const { table: t, where } = spec;
  const bound = Math.max(1, Math.trunc(spec.limit));
  switch (dialect.name) {
    case 'postgres':
      return `DELETE FROM ${t} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${t} WHERE ${where} LIMIT ${bound})) AND ${where}`;
    case 'sqlite':
      return `DELETE FROM ${t} WHERE rowid IN (SELECT rowid FROM ${t} WHERE ${where} LIMIT ${bound})`;
    case 'mysql':
    case 'mariadb': {
      const order = spec.orderBy ? ` ORDER BY ${spec.orderBy}` : '';
      return `DELETE FROM ${t} WHERE ${where}${order} LIMIT ${bound}`;
    }
    case 'mssql':
      return `DELETE TOP (${bound}) FROM ${t} WHERE ${where}`;
    case 'oracle':
      return `DELETE FROM ${t} WHERE ${where} AND ROWNUM <= ${bound}`;
  }
}
