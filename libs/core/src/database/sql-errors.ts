/** The driver's own error behind TypeORM's QueryFailedError (or the error itself). */
function driverError(error: unknown): { code?: unknown; errno?: unknown; message?: unknown } {
  const e = error as { driverError?: unknown } | undefined;
  return ((e && typeof e === 'object' && 'driverError' in e ? e.driverError : e) ?? {}) as {
    code?: unknown;
    errno?: unknown;
    message?: unknown;
  };
}

/** A primary-key or unique violation: pg 23505, MySQL/MariaDB 1062, SQLite SQLITE_CONSTRAINT_PRIMARYKEY/UNIQUE. */
export function isDuplicateKeyError(error: unknown): boolean {
  const e = driverError(error);
  return (
    e.code === '23505' ||
    e.errno === 1062 ||
    e.code === 'ER_DUP_ENTRY' ||
    e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    e.code === 'SQLITE_CONSTRAINT_UNIQUE'
  );
}

/** A statement the server could not parse: pg 42601, MySQL/MariaDB 1064, SQLite "syntax error". */
export function isSyntaxError(error: unknown): boolean {
  const e = driverError(error);
  return (
    e.code === '42601' ||
    e.errno === 1064 ||
    e.code === 'ER_PARSE_ERROR' ||
    (e.code === 'SQLITE_ERROR' && /syntax error|incomplete input/i.test(String(e.message)))
  );
}

/** A deadlock or serialization failure worth one retry: pg 40P01/40001, MySQL 1213, SQLite busy. */
export function isTransientConflictError(error: unknown): boolean {
  const e = driverError(error);
  return (
    e.code === '40P01' ||
    e.code === '40001' ||
    e.errno === 1213 ||
    e.code === 'ER_LOCK_DEADLOCK' ||
    e.code === 'SQLITE_BUSY'
  );
}
