import { StatementBinder, type SqlBinder, type SqlDialect, type Statement } from '@holdfast/core/kit';

/**
 * Simba's SQL that differs per database and no other Holdfast lib writes: creating missing mutex
 * rows, the fencing token that never goes back, and the server-side bounds on a tick's waits.
 */

/** Rows inserted unless their key exists: see `insertMissing`. */
export interface InsertMissingSpec {
  /** Fully prefixed table name (already validated). */
  table: string;
  /** Every column written, in the order of `row`'s values. */
  columns: readonly string[];
  /** The one key column; a row whose key already exists is left alone. */
  key: string;
  /** The key of each row, bound in this order. */
  keys: readonly unknown[];
  /** The values of one row, comma-separated, given the SQL expression of its key. */
  row(key: string): string;
}

/**
 * One statement that inserts the rows whose key is missing and leaves existing ones alone
 * (`ON CONFLICT DO NOTHING`, MySQL/MariaDB `ON DUPLICATE KEY UPDATE key = key`, elsewhere an
 * `INSERT ... SELECT ... WHERE NOT EXISTS` over table-less rows).
 */
export function insertMissing(d: SqlDialect, spec: InsertMissingSpec): Statement {
  const b = new StatementBinder(d);
  const head = `INSERT INTO ${spec.table} (${spec.columns.join(', ')})`;
  const values = () => `${head} VALUES ${spec.keys.map((k) => `(${spec.row(b.bind(k))})`).join(', ')}`;
  switch (d.name) {
    case 'postgres':
    case 'sqlite':
      return b.statement(`${values()} ON CONFLICT (${spec.key}) DO NOTHING`);
    case 'mysql':
    case 'mariadb':
      return b.statement(`${values()} ON DUPLICATE KEY UPDATE ${spec.key} = ${spec.key}`);
    default: {
      const rows = spec.keys.map((k) => d.selectRow(`${b.bind(k)} AS ${spec.key}`)).join(' UNION ALL ');
      return b.statement(
        `${head} SELECT ${spec.row(`v.${spec.key}`)} FROM (${rows}) v ` +
          `WHERE NOT EXISTS (SELECT 1 FROM ${spec.table} t WHERE t.${spec.key} = v.${spec.key})`,
      );
    }
  }
}

/** `value`, or `previous + 1` when `value` is not greater than `previous` (a counter that never goes back). */
export function atLeastAfter(d: Pick<SqlDialect, 'name'>, value: string, previous: string): string {
  switch (d.name) {
    case 'sqlite':
      // SQLite's two-argument MAX is its GREATEST.
      return `MAX(${value}, ${previous} + 1)`;
    case 'mssql':
      return `CASE WHEN ${value} > ${previous} THEN ${value} ELSE ${previous} + 1 END`;
    default:
      return `GREATEST(${value}, ${previous} + 1)`;
  }
}

/**
 * `sql` bounded to `ms` server-side where the dialect has a per-statement form (MariaDB's
 * `SET STATEMENT max_statement_time = <s> FOR ...`; MySQL's `max_execution_time` hint bounds
 * SELECTs alone); `sql` itself elsewhere.
 */
export function withStatementTimeout(d: Pick<SqlDialect, 'name'>, sql: string, ms: number): string {
  if (d.name !== 'mariadb') return sql;
  const seconds = (Math.max(1, Math.trunc(ms)) / 1000).toFixed(3);
  return `SET STATEMENT max_statement_time = ${seconds} FOR ${sql}`;
}

/**
 * MariaDB: `withStatementTimeout`, and every lock wait of `sql` bounded to `ms` as well, which a
 * statement inside a compound statement needs: MariaDB ignores `max_statement_time` there, while a
 * lock wait reads its own bound when it begins (`SET STATEMENT max_statement_time = …,
 * innodb_lock_wait_timeout = … FOR …`; whole seconds for the lock wait, at least 1). MySQL: `sql`
 * as it is. Undefined elsewhere (`withStatementTimeout` is all there is).
 */
export function withLockWaitTimeout(
  d: Pick<SqlDialect, 'name'>,
  sql: string,
  ms: number,
): string | undefined {
  if (d.name === 'mysql') return sql;
  if (d.name !== 'mariadb') return undefined;
  const bound = Math.max(1, Math.trunc(ms));
  const seconds = (bound / 1000).toFixed(3);
  const lockWait = Math.max(1, Math.floor(bound / 1000));
  return `SET STATEMENT max_statement_time = ${seconds}, innodb_lock_wait_timeout = ${lockWait} FOR ${sql}`;
}

/**
 * A statement run first in a transaction that bounds every later statement of it, and the time
 * it may stay idle, to `ms`, where the database has a transaction-scoped setting (PostgreSQL);
 * undefined elsewhere.
 */
export function transactionStatementTimeout(d: SqlDialect, ms: number): Statement | undefined {
  if (d.name !== 'postgres') return undefined;
  const value = `${Math.max(1, Math.trunc(ms))}ms`;
  const b = new StatementBinder(d);
  return b.statement(
    `SELECT set_config('statement_timeout', ${b.bind(value)}, true) AS a, ` +
      `set_config('idle_in_transaction_session_timeout', ${b.bind(value)}, true) AS b`,
  );
}

/**
 * PostgreSQL: an expression that, once evaluated in a statement, bounds every later wait of that
 * statement for a lock (a row another transaction is writing) to `ms`, server-side, and is
 * reverted with the statement's transaction (`set_config('lock_timeout', …, true)`; the wait reads
 * the setting when it begins, where a statement timeout is fixed when the statement starts). For
 * a statement that is its own transaction: referenced in the condition of each of its writes, it
 * bounds their waits with nothing sent before the statement. Undefined elsewhere.
 */
export function lockWaitBound(d: Pick<SqlDialect, 'name'>, b: SqlBinder, ms: number): string | undefined {
  if (d.name !== 'postgres') return undefined;
  return `set_config('lock_timeout', ${b.bind(`${Math.max(1, Math.trunc(ms))}ms`)}, true)`;
}

/** The query that reads the connection's busy timeout in ms (SQLite's write-lock wait); undefined elsewhere. */
export function busyTimeoutQuery(d: Pick<SqlDialect, 'name'>): string | undefined {
  return d.name === 'sqlite' ? 'PRAGMA busy_timeout' : undefined;
}
