import type { QueryRunner } from 'typeorm';
import type { Dialect } from '../dialect/dialect';

/**
 * The default server-side bound on a transaction whose client goes quiet inside it: 30 s. A
 * frozen or partitioned process then holds its row locks for at most this long.
 */
export const DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS = 30_000;

/** The isolation levels a transaction may ask for (the server's default when none is asked). */
export const ISOLATION_LEVELS = ['read committed', 'repeatable read', 'serializable'] as const;
export type IsolationLevel = (typeof ISOLATION_LEVELS)[number];

/** The MySQL/MariaDB session variable that bounds an idle transaction, in whole seconds. */
function mysqlVariable(dialect: Dialect): string {
  // MariaDB ends only idle *transactions*; MySQL has no such variable, so its bound is the
  // connection's idle timeout, set for the transaction's duration only.
  return dialect === 'mariadb' ? 'idle_transaction_timeout' : 'wait_timeout';
}

/**
 * Opens a transaction on `runner` that the server ends by itself if the client sends nothing
 * for `idleMs` inside it (0: no bound):
 * - PostgreSQL: `SET LOCAL idle_in_transaction_session_timeout` sent with the BEGIN (one round
 *   trip, transaction-scoped, so it works behind PgBouncer in transaction mode);
 * - MariaDB: the session's `idle_transaction_timeout` (seconds), set before BEGIN and reset by
 *   `endBoundedTransaction`, so the application's own transactions on that connection keep the
 *   server's setting;
 * - MySQL: the session's `wait_timeout` the same way;
 * - SQLite: `BEGIN IMMEDIATE` (one process's file lock; no server to end anything).
 *
 * `isolation`, when given, is the transaction's isolation level (the session's otherwise):
 * PostgreSQL `BEGIN ISOLATION LEVEL …` (same round trip); MySQL/MariaDB `SET TRANSACTION
 * ISOLATION LEVEL …` right before `START TRANSACTION`, which applies to that one transaction
 * only; SQLite ignores it, its transactions are always serializable (stronger than any level
 * asked for).
 */
export async function beginBoundedTransaction(
  runner: QueryRunner,
  dialect: Dialect,
  idleMs: number,
  isolation?: IsolationLevel,
): Promise<void> {
  const ms = Math.max(0, Math.ceil(idleMs));
  const level = isolation?.toUpperCase();
  switch (dialect) {
    case 'postgres': {
      const begin = level ? `BEGIN ISOLATION LEVEL ${level}` : 'BEGIN';
      await runner.query(ms > 0 ? `${begin}; SET LOCAL idle_in_transaction_session_timeout = ${ms}` : begin);
      return;
    }
    case 'mysql':
    case 'mariadb':
      if (ms > 0)
        await runner.query(`SET SESSION ${mysqlVariable(dialect)} = ${Math.max(1, Math.ceil(ms / 1000))}`);
      // Without SESSION or GLOBAL: the next transaction only, the session keeps its own level.
      if (level) await runner.query(`SET TRANSACTION ISOLATION LEVEL ${level}`);
      await runner.query('START TRANSACTION');
      return;
    case 'sqlite':
      await runner.query('BEGIN IMMEDIATE');
      return;
    default:
      await runner.startTransaction(level as Parameters<QueryRunner['startTransaction']>[0]);
  }
}

/**
 * Commits or rolls back a transaction opened by `beginBoundedTransaction`, then gives the
 * connection its server default back (MySQL/MariaDB). A rollback on a connection the server has
 * already closed is not an error: the server rolled the transaction back itself.
 */
export async function endBoundedTransaction(
  runner: QueryRunner,
  dialect: Dialect,
  idleMs: number,
  outcome: 'commit' | 'rollback',
): Promise<void> {
  if (await finishTransaction(runner, dialect, outcome)) await resetBoundedSession(runner, dialect, idleMs);
}

/** COMMIT or ROLLBACK; false when a rollback found the connection gone. */
export async function finishTransaction(
  runner: QueryRunner,
  dialect: Dialect,
  outcome: 'commit' | 'rollback',
): Promise<boolean> {
  if (dialect !== 'postgres' && dialect !== 'mysql' && dialect !== 'mariadb' && dialect !== 'sqlite') {
    if (outcome === 'commit') await runner.commitTransaction();
    else if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
    return true;
  }
  if (outcome === 'commit') {
    await runner.query('COMMIT');
    return true;
  }
  try {
    await runner.query('ROLLBACK');
    return true;
  } catch {
    return false; // the connection is gone; so is its session state
  }
}

/** True when the connection carries session state from `beginBoundedTransaction` to reset. */
export function needsSessionReset(dialect: Dialect, idleMs: number): boolean {
  return (dialect === 'mysql' || dialect === 'mariadb') && idleMs > 0;
}

/**
 * MySQL/MariaDB: the session variable back to the server's default, so that the application's
 * own transactions on this pooled connection keep the server's setting. Never throws: after a
 * COMMIT the outcome is settled, and a failing reset means a dead connection anyway.
 */
export async function resetBoundedSession(
  runner: QueryRunner,
  dialect: Dialect,
  idleMs: number,
): Promise<void> {
  if (!needsSessionReset(dialect, idleMs)) return;
  await runner.query(`SET SESSION ${mysqlVariable(dialect)} = DEFAULT`).catch(() => undefined);
}
