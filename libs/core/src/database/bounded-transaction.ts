import type { QueryRunner } from 'typeorm';
import type { SqlDialect } from '../dialect/sql-dialect';
import { InvalidOptionsError } from '../errors/holdfast.error';
import type { BoundedConnections } from './bounded-connections';
import {
  finishTransaction,
  ISOLATION_LEVELS,
  needsSessionReset,
  openBoundedTransaction,
  resetBoundedSession,
  type IsolationLevel,
} from './transaction-bound';

/** One `SqlClient.transaction()`: where it runs and its bounds. */
export interface BoundedTransactionContext {
  connections: BoundedConnections;
  dialect: SqlDialect;
  /** Milliseconds after which the server ends the transaction if its client goes quiet (0: never). */
  idleMs: number;
  isolation?: IsolationLevel;
}

/** Throws an InvalidOptionsError unless `isolation` is undefined or one of ISOLATION_LEVELS. */
export function validateIsolation(isolation: unknown): void {
  if (isolation === undefined || (ISOLATION_LEVELS as readonly unknown[]).includes(isolation)) return;
  throw new InvalidOptionsError('SqlClient.transaction', [
    `isolation must be one of ${ISOLATION_LEVELS.map((l) => `'${l}'`).join(', ')}, got ${JSON.stringify(isolation)}`,
  ]);
}

/**
 * Runs `work` in one bounded transaction on one connection of the pool (see
 * `openBoundedTransaction`): commits when it resolves, rolls back when it throws, gives the
 * session its defaults back, and returns the connection to the pool (unless the bound destroyed it).
 */
export async function inBoundedTransaction<T>(
  ctx: BoundedTransactionContext,
  work: (runner: QueryRunner) => Promise<T>,
): Promise<T> {
  const { connections, dialect, idleMs: idle, isolation } = ctx;
  const runner = await connections.connectRunner();
  let releasing = false;
  try {
    // MariaDB: sent with the first statement (see openBoundedTransaction).
    await connections.guard(runner, openBoundedTransaction(runner, dialect, idle, isolation));
    let result: T;
    try {
      result = await work(runner);
      await connections.guard(runner, finishTransaction(runner, dialect, 'commit'));
    } catch (error) {
      if (
        !connections.isDestroyed(runner) &&
        (await connections.guard(runner, finishTransaction(runner, dialect, 'rollback')).catch(() => false))
      )
        await connections.guard(runner, resetBoundedSession(runner, dialect, idle)).catch(() => undefined);
      throw error;
    }
    if (needsSessionReset(dialect, idle)) {
      // The outcome is settled at COMMIT: the caller goes on while the connection's session
      // is reset, and the connection returns to the pool after that.
      releasing = true;
      void connections
        .guard(runner, resetBoundedSession(runner, dialect, idle))
        .then(() => runner.release())
        .catch(() => undefined);
    }
    return result;
  } finally {
    if (!releasing) await connections.release(runner);
  }
}
