/** The driver's own error behind TypeORM's QueryFailedError (or the error itself). */
function driverError(error: unknown): { code?: unknown; errno?: unknown; message?: unknown } {
  const e = error as { driverError?: unknown } | undefined;
  return ((e && typeof e === 'object' && 'driverError' in e ? e.driverError : e) ?? {}) as {
    code?: unknown;
    errno?: unknown;
    message?: unknown;
  };
}

/** The driver's error code (pg SQLSTATE, mysql2 `ER_*` name, SQLite `SQLITE_*`), else its errno, if any. */
export function sqlErrorCode(error: unknown): string | undefined {
  const { code, errno } = driverError(error);
  if (typeof code === 'string') return code;
  return typeof errno === 'number' ? String(errno) : undefined;
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

/**
 * CREATE of a table or index that exists: pg 42P07 (or the catalog's unique index when two
 * sessions create the same name at once), MySQL/MariaDB 1050/1061, SQLite "already exists".
 * Only a re-check of the catalog tells whether the object is really there.
 */
export function isAlreadyExistsError(error: unknown): boolean {
  const e = driverError(error) as {
    code?: unknown;
    errno?: unknown;
    message?: unknown;
    constraint?: unknown;
  };
  return (
    e.code === '42P07' ||
    e.code === '42710' ||
    (e.code === '23505' && /^pg_(class|type)_/.test(String(e.constraint))) ||
    e.errno === 1050 ||
    e.errno === 1061 ||
    e.code === 'ER_TABLE_EXISTS_ERROR' ||
    e.code === 'ER_DUP_KEYNAME' ||
    (e.code === 'SQLITE_ERROR' && /already exists/i.test(String(e.message)))
  );
}

/**
 * The server (or the account's limit) has no room for another connection: pg 53300 ("sorry, too
 * many clients already", "too many connections for role"), MySQL/MariaDB 1040
 * (ER_CON_COUNT_ERROR), 1203 (ER_TOO_MANY_USER_CONNECTIONS), 1226 (ER_USER_LIMIT_REACHED).
 */
export function isTooManyConnectionsError(error: unknown): boolean {
  const e = driverError(error);
  return (
    e.code === '53300' ||
    e.errno === 1040 ||
    e.errno === 1203 ||
    e.errno === 1226 ||
    e.code === 'ER_CON_COUNT_ERROR' ||
    e.code === 'ER_TOO_MANY_USER_CONNECTIONS' ||
    e.code === 'ER_USER_LIMIT_REACHED'
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

/**
 * A conflict that a retry of the whole unit of work resolves: pg 40P01 (deadlock) and 40001
 * (serialization failure), MySQL/MariaDB 1213 (deadlock) and 1205 (lock wait timeout), SQLite busy.
 * On Galera 1213 also comes at COMMIT, when the cluster refused the transaction's write set
 * (a certification failure) or another node's write aborted it: retried the same way.
 */
export function isTransientConflictError(error: unknown): boolean {
  const e = driverError(error);
  return (
    e.code === '40P01' ||
    e.code === '40001' ||
    e.errno === 1213 ||
    e.errno === 1205 ||
    e.code === 'ER_LOCK_DEADLOCK' ||
    e.code === 'ER_LOCK_WAIT_TIMEOUT' ||
    e.code === 'SQLITE_BUSY'
  );
}

/** Network-level error codes of Node and the drivers: the connection, not the statement, failed. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'HOLDFAST_CORE_SQL_TIMEOUT',
  // PostgreSQL: the server is shutting down or starting, or the connection failed.
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);

/**
 * A server that answers but cannot serve yet or any more, which on an HA cluster is part of an
 * outage, not an error of the statement: a Galera node that is not a synced member of the primary
 * component (1047 "WSREP has not yet prepared node for application use"), a MariaDB server
 * shutting down (1053) or killing the connection (1927), a read-only server where a primary was
 * expected (MariaDB 1290 `--read-only`, 1792; PostgreSQL 25006, e.g. Patroni's new leader before
 * its promotion finishes, or a standby behind the endpoint).
 */
export function isNodeNotReadyError(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const e = driverError(error);
  return (
    e.errno === 1047 ||
    e.code === 'ER_UNKNOWN_COM_ERROR' ||
    e.errno === 1053 ||
    e.code === 'ER_SERVER_SHUTDOWN' ||
    e.errno === 1927 ||
    e.code === 'ER_CONNECTION_KILLED' ||
    e.errno === 1290 ||
    e.code === 'ER_OPTION_PREVENTS_STATEMENT' ||
    e.errno === 1792 ||
    e.code === 'ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION' ||
    e.code === '25006' ||
    /WSREP has not yet prepared node/i.test(String(e.message ?? ''))
  );
}

/**
 * The database could not be reached or stopped answering (refused, reset or dropped connection,
 * a server shutting down, a bounded wait that timed out, a cluster node that is not ready or is
 * read-only: isNodeNotReadyError), as opposed to an error of the statement itself: what an outage
 * looks like to a caller.
 */
export function isConnectionError(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  if (isNodeNotReadyError(error)) return true;
  const own = (error as { code?: unknown }).code;
  if (typeof own === 'string' && CONNECTION_CODES.has(own)) return true;
  const e = driverError(error);
  if (typeof e.code === 'string' && CONNECTION_CODES.has(e.code)) return true;
  return /Connection terminated|not queryable|connection is closed|closed state|Connection lost|connect ECONN|timeout exceeded when trying to connect/i.test(
    String(e.message ?? (error as { message?: unknown }).message ?? ''),
  );
}
