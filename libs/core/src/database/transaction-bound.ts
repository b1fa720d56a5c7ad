import type { QueryRunner } from 'typeorm';
import type { StatementResult } from './driver-channel';
import type { Dialect } from '../dialect/dialect';
import { asSqlDialect } from '../dialect/dialects';
import type { CompoundTransactionSql, SqlDialect } from '../dialect/sql-dialect';

/**
 * The default server-side bound on a transaction whose client goes quiet inside it: 30 s. A
 * frozen or partitioned process then holds its row locks for at most this long.
 */
export const DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS = 30_000;

/** The isolation levels a transaction may ask for (the server's default when none is asked). */
export const ISOLATION_LEVELS = ['read committed', 'repeatable read', 'serializable'] as const;
export type IsolationLevel = (typeof ISOLATION_LEVELS)[number];

/**
 * Opens a transaction on `runner` that the server ends by itself if the client sends nothing
 * for `idleMs` inside it (0: no bound):
 * - PostgreSQL: `SET LOCAL idle_in_transaction_session_timeout` sent with the BEGIN (one round
 *   trip, transaction-scoped, so it works behind PgBouncer in transaction mode);
 * - MariaDB: the session's `idle_transaction_timeout` (seconds), set before BEGIN and reset by
 *   `endBoundedTransaction`, so the application's own transactions on that connection keep the
 *   server's setting; each in one compound statement with the BEGIN or the COMMIT (one round
 *   trip each);
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
  dialect: Dialect | SqlDialect,
  idleMs: number,
  isolation?: IsolationLevel,
): Promise<void> {
  const ms = Math.max(0, Math.ceil(idleMs));
  const level = isolation?.toUpperCase();
  const statements = asSqlDialect(dialect).beginTransaction(ms, level);
  if (!statements) {
    await runner.startTransaction(level as Parameters<QueryRunner['startTransaction']>[0]);
    return;
  }
  for (const statement of statements) await runner.query(statement);
}

/**
 * Commits or rolls back a transaction opened by `beginBoundedTransaction`, then gives the
 * connection its server default back (MySQL/MariaDB). A rollback on a connection the server has
 * already closed is not an error: the server rolled the transaction back itself.
 */
export async function endBoundedTransaction(
  runner: QueryRunner,
  dialect: Dialect | SqlDialect,
  idleMs: number,
  outcome: 'commit' | 'rollback',
): Promise<void> {
  const sql = asSqlDialect(dialect);
  const compound = sql.compoundTransactions;
  if (compound && Math.ceil(idleMs) > 0) {
    // The reset with the COMMIT or ROLLBACK, in one round trip.
    const ending = compound.compound(compound.closing(outcome, idleMs));
    if (outcome === 'commit') await runner.query(ending);
    else await runner.query(ending).catch(() => undefined); // a connection gone: so is its session
    return;
  }
  if (await finishTransaction(runner, sql, outcome)) await resetBoundedSession(runner, sql, idleMs);
}

/** COMMIT or ROLLBACK; false when a rollback found the connection gone. */
export async function finishTransaction(
  runner: QueryRunner,
  dialect: Dialect | SqlDialect,
  outcome: 'commit' | 'rollback',
): Promise<boolean> {
  const tx = deferred.get(runner);
  if (tx) {
    deferred.delete(runner);
    // Nothing sent (no statement, so no transaction on the server), or over already.
    if (tx.opening || tx.ended) return true;
    const ending = tx.sql.compound(tx.sql.closing(outcome, tx.idleMs));
    if (outcome === 'commit') {
      await runner.query(ending);
      return true;
    }
    // The reset goes with the ROLLBACK (see needsSessionReset); a connection gone took it along.
    await runner.query(ending).catch(() => undefined);
    return true;
  }
  const ending = asSqlDialect(dialect).endTransaction(outcome);
  if (ending === undefined) {
    if (outcome === 'commit') await runner.commitTransaction();
    else if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
    return true;
  }
  if (outcome === 'commit') {
    await runner.query(ending);
    return true;
  }
  try {
    await runner.query(ending);
    return true;
  } catch {
    return false; // the connection is gone; so is its session state
  }
}

/**
 * True when the connection carries session state from `beginBoundedTransaction` to reset apart:
 * MySQL's. MariaDB's reset goes with the transaction's COMMIT or ROLLBACK, in one compound
 * statement (`endBoundedTransaction`, `finishTransaction` after `openBoundedTransaction`).
 */
export function needsSessionReset(dialect: Dialect | SqlDialect, idleMs: number): boolean {
  return asSqlDialect(dialect).sessionReset(idleMs) !== undefined;
}

/**
 * MySQL/MariaDB: the session variable back to the server's default, so that the application's
 * own transactions on this pooled connection keep the server's setting. Never throws: after a
 * COMMIT the outcome is settled, and a failing reset means a dead connection anyway.
 */
export async function resetBoundedSession(
  runner: QueryRunner,
  dialect: Dialect | SqlDialect,
  idleMs: number,
): Promise<void> {
  const reset = asSqlDialect(dialect).sessionReset(idleMs);
  if (reset === undefined) return;
  await runner.query(reset).catch(() => undefined);
}

/** A MariaDB transaction opened by `openBoundedTransaction`: what it has not sent yet. */
interface DeferredTransaction {
  sql: CompoundTransactionSql;
  idleMs: number;
  /** The statements that open it, until they go out in front of its first statement. */
  opening?: string[];
  /** Ended already, by a statement sent with its COMMIT (`runInTransaction`'s `commit`). */
  ended?: boolean;
}

const deferred = new WeakMap<QueryRunner, DeferredTransaction>();

/**
 * `beginBoundedTransaction`, except that on MariaDB nothing is sent yet: the opening statements go
 * out in front of the transaction's first statement, in one compound statement, and its end
 * (COMMIT or ROLLBACK, and the session's reset) in one more (see `runInTransaction` and
 * `finishTransaction`). A MariaDB transaction then costs the server's answers to its own
 * statements plus one round trip, where the statements one by one cost three or four more (a
 * database 1 ms away pays 2 ms for each). Statements on `runner` must then go through
 * `runInTransaction` until the transaction ends.
 */
export async function openBoundedTransaction(
  runner: QueryRunner,
  dialect: Dialect | SqlDialect,
  idleMs: number,
  isolation?: IsolationLevel,
): Promise<void> {
  const sql = asSqlDialect(dialect).compoundTransactions;
  if (!sql) return beginBoundedTransaction(runner, dialect, idleMs, isolation);
  const ms = Math.max(0, Math.ceil(idleMs));
  deferred.set(runner, { sql, idleMs: ms, opening: sql.opening(ms, isolation?.toUpperCase()) });
}

/**
 * One statement of a transaction opened by `openBoundedTransaction`: on MariaDB with the opening
 * statements in front of it when it is the first, and with `commit`, the transaction's last: sent
 * with its COMMIT (and the session's reset), in one round trip, after which the transaction is
 * over (elsewhere `commit` changes nothing: the COMMIT follows as usual).
 */
export async function runInTransaction(
  runner: QueryRunner,
  sql: string,
  params: readonly unknown[],
  commit = false,
): Promise<StatementResult> {
  const tx = deferred.get(runner);
  if (!tx || tx.ended || (!tx.opening && !commit))
    return runner.query(sql, params as unknown[], true) as Promise<StatementResult>;
  const statements = [...(tx.opening ?? []), sql, ...(commit ? tx.sql.closing('commit', tx.idleMs) : [])];
  tx.opening = undefined;
  const result = (await runner.query(
    tx.sql.compound(statements),
    params as unknown[],
    true,
  )) as StatementResult;
  if (commit) tx.ended = true;
  if (statements.length === 1) return result;
  // A compound statement's result: a SELECT's rows come as a result set of their own, before the
  // compound's own OK.
  const sets = result.records ?? [];
  return Array.isArray(sets[0])
    ? { records: sets[0] as unknown[] }
    : { records: [], affected: result.affected };
}
