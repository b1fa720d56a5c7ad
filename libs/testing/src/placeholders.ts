import type { Dialect } from '@holdfast/core/kit';

/**
 * Counts the bind placeholders in generated SQL, per dialect style: `?` occurrences for
 * MySQL/MariaDB/SQLite, distinct `$n` / `@n` / `:n` for PostgreSQL, SQL Server and Oracle.
 */
export function countPlaceholders(dialect: Dialect, sql: string): number {
  const withoutStrings = sql.replace(/'(?:[^']|'')*'/g, "''");
  switch (dialect) {
    case 'postgres':
      return new Set(withoutStrings.match(/\$\d+/g) ?? []).size;
    case 'mssql':
      return new Set(withoutStrings.match(/@\d+/g) ?? []).size;
    case 'oracle':
      return new Set(withoutStrings.match(/:\d+/g) ?? []).size;
    default:
      return (withoutStrings.match(/\?/g) ?? []).length;
  }
}
