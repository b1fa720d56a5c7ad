import type { Duration } from '../time/duration';
import type { SyncRowReader } from './driver-channel';
import type { IsolationLevel } from './transaction-bound';

export interface SqlClientOptions {
  /**
   * How long the server lets a transaction of this client sit idle (the client sending nothing
   * inside it) before it ends the transaction and its connection, releasing its locks: a frozen
   * or partitioned process holds nobody's rows for longer. Milliseconds or a string like '30s';
   * 0 turns the bound off. Default 30 s. PostgreSQL `idle_in_transaction_session_timeout`
   * (SET LOCAL), MariaDB `idle_transaction_timeout`, MySQL `wait_timeout` (whole seconds, rounded up).
   */
  idleInTransactionTimeout?: Duration;
  /**
   * A client-side bound on every wait of this client on a server database (PostgreSQL, MySQL,
   * MariaDB; SQLite has no network to wait on): the wait for a pooled connection, and each
   * statement's answer, BEGIN and COMMIT included. A wait past it fails with a `SqlTimeoutError`;
   * a statement that timed out has its connection's socket destroyed (never returned to the pool,
   * nothing more sent on it; a transaction on it is rolled back by the server when it sees the
   * socket close, or by its idle bound), and the pooled connections that have not answered since
   * are destroyed when next checked out, so one silent network path costs one bound, not one per
   * connection. Milliseconds or a string like '10s'; 0 (default) turns the bound off.
   */
  statementTimeout?: Duration;
}

/** Options of one statement run by `SqlClient.query` or `execute` (`query(statement, options)`). */
export interface StatementOptions {
  /**
   * A hot statement of fixed text, run again and again: PostgreSQL keeps it parsed and planned
   * per pooled connection (a named statement, see PgStatementNames), outside transactions. No
   * effect on other databases (SQLite statements are always kept compiled) or in a transaction.
   */
  prepared?: boolean;
  /**
   * In a `transaction()`: this is its last statement. MariaDB sends it together with the COMMIT
   * (one round trip for both); elsewhere the COMMIT follows as usual. Anything the transaction's
   * work runs after it runs outside the transaction.
   */
  commit?: boolean;
}

/** Options of one `SqlClient.transaction()`. */
export interface TransactionOptions {
  /**
   * The transaction's isolation level: 'read committed', 'repeatable read' or 'serializable'
   * (default: the session's, which is the server's). SQLite's transactions are always
   * serializable, which satisfies any level asked for.
   */
  isolation?: IsolationLevel;
}

/**
 * See `SqlClient.rowReader`: `V` is the values of a `StatementTemplate`, by name (the deprecated
 * form from SQL text takes the placeholders' values in order).
 */
export interface SqlRowReader<V = readonly unknown[]> extends Omit<SyncRowReader, 'row'> {
  /** The first row (null: none), or undefined when the statement cannot run synchronously now. */
  row(values: V): unknown[] | null | undefined;
}
