/** Database dialects Holdfast generates SQL for. */
export const DIALECTS = ['postgres', 'mysql', 'mariadb', 'sqlite', 'mssql', 'oracle'] as const;
export type Dialect = (typeof DIALECTS)[number];

/** Dialects whose SQL is executed against a real server in the test suite. */
export const EXECUTED_DIALECTS: readonly Dialect[] = ['postgres', 'mysql', 'mariadb', 'sqlite'];

export function isDialect(value: unknown): value is Dialect {
  return typeof value === 'string' && (DIALECTS as readonly string[]).includes(value);
}
