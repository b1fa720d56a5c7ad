import type { CompoundTransactionSql } from './sql-dialect';

/** Whole seconds of `idleMs` for MariaDB's `idle_transaction_timeout` (at least 1). */
function seconds(idleMs: number): number {
  return Math.max(1, Math.ceil(idleMs / 1000));
}

/**
 * MariaDB's bounded transactions: the session's `idle_transaction_timeout` set with the opening
 * and reset with the end, each in one compound statement with the BEGIN or the COMMIT.
 */
export const MARIADB_TRANSACTIONS: CompoundTransactionSql = {
  opening: (ms, level) => [
    ...(ms > 0 ? [`SET SESSION idle_transaction_timeout = ${seconds(ms)}`] : []),
    // Without SESSION or GLOBAL: the next transaction only, the session keeps its own level.
    ...(level ? [`SET TRANSACTION ISOLATION LEVEL ${level}`] : []),
    'START TRANSACTION',
  ],
  closing: (outcome, idleMs) => [
    outcome.toUpperCase(),
    ...(Math.ceil(idleMs) > 0 ? ['SET SESSION idle_transaction_timeout = DEFAULT'] : []),
  ],
  /**
   * Several MariaDB statements sent as one (a compound statement, `BEGIN NOT ATOMIC … END`): one
   * round trip, with no need for the driver's multi-statement mode. It stops at the first
   * statement that fails, with that error; a SELECT in it sends its rows as a result set of its own.
   */
  compound: (statements) => {
    if (statements.length === 1) return statements[0];
    return `BEGIN NOT ATOMIC ${statements.map((s) => s.replace(/[\s;]+$/, '')).join('; ')}; END`;
  },
};
