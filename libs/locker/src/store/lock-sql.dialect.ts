import type { Dialect } from '@holdfast/core/kit';

/**
 * Statements that make the server end the session's open transaction (and free its row locks)
 * once its client has been silent inside it for `idleMillis`, run inside that transaction: the
 * locker's row lock is the one Holdfast transaction held open for as long as a lock is.
 * PostgreSQL: transaction-local (`set_config(..., true)`), so it works behind PgBouncer.
 * MySQL/MariaDB: whole seconds, session scope (the caller must not return the connection to a
 * pool with them set). MariaDB ends an idle transaction itself (`idle_transaction_timeout`); MySQL
 * has no such variable, so its bound is the connection's idle timeout (`wait_timeout`), which
 * MariaDB gets too. Empty where the dialect has no such setting.
 */
export function idleTransactionTimeouts(dialect: { readonly name: Dialect }, idleMillis: number): string[] {
  const ms = Math.max(1, Math.ceil(idleMillis));
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  switch (dialect.name) {
    case 'postgres':
      return [`SELECT set_config('idle_in_transaction_session_timeout', '${ms}', true) AS t`];
    case 'mariadb':
      return [`SET SESSION idle_transaction_timeout = ${seconds}`, `SET SESSION wait_timeout = ${seconds}`];
    case 'mysql':
      return [`SET SESSION wait_timeout = ${seconds}`];
    default:
      return [];
  }
}
