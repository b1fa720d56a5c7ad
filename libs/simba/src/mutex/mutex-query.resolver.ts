import { tableName, type SqlDialect } from '@holdfast/core';
import { SIMBA_MUTEX_TABLE } from '../table/simba-mutex.table';

/** A statement and its bound parameters. */
export interface BoundSql {
  sql: string;
  params: unknown[];
}

/**
 * Every SQL statement on `simba_mutex`, built from the core dialect pieces. `now` is always the
 * database clock (`dialect.nowMillis`) evaluated inside the statement, never an app timestamp.
 */
export class MutexQueryResolver {
  readonly table: string;

  constructor(
    private readonly dialect: SqlDialect,
    prefix: string,
  ) {
    this.table = tableName(prefix, SIMBA_MUTEX_TABLE.name);
  }

  private p(index: number): string {
    return this.dialect.placeholder(index);
  }

  /** Creates the row of a mutex if it is missing; a concurrent creator is ignored (DO NOTHING). */
  ensureRow(mutex: string): BoundSql {
    return {
      sql: this.dialect.upsert({ table: this.table, columns: ['mutex'], keys: ['mutex'] }),
      params: [mutex],
    };
  }

  /**
   * Simba's conditional acquire: free once `transition_at` has passed, or a renewal by the owner
   * while its transition is still running. The version is the fencing token.
   */
  acquire(mutex: string, contenderId: string, ttlMs: number, transitionMs: number): BoundSql {
    const now = this.dialect.nowMillis;
    return {
      sql:
        `UPDATE ${this.table} SET acquired_at = ${now}, ttl_at = ${now} + ${this.p(1)}, ` +
        `transition_at = ${now} + ${this.p(2)}, owner_id = ${this.p(3)}, version = version + 1 ` +
        `WHERE mutex = ${this.p(4)} AND (transition_at < ${now} OR (owner_id = ${this.p(5)} AND transition_at > ${now}))`,
      params: [Math.trunc(ttlMs), Math.trunc(ttlMs + transitionMs), contenderId, mutex, contenderId],
    };
  }

  /** Gives the mutex up: no owner, and acquirable at once (transition in the past). */
  release(mutex: string, contenderId: string): BoundSql {
    const now = this.dialect.nowMillis;
    return {
      sql:
        `UPDATE ${this.table} SET owner_id = '', ttl_at = ${now} - 1, transition_at = ${now} - 1, ` +
        `version = version + 1 WHERE mutex = ${this.p(1)} AND owner_id = ${this.p(2)}`,
      params: [mutex, contenderId],
    };
  }

  /** The row with the database clock read in the same statement. */
  select(mutex: string): BoundSql {
    return {
      sql:
        `SELECT mutex AS mutex, acquired_at AS acquired_at, ttl_at AS ttl_at, transition_at AS transition_at, ` +
        `owner_id AS owner_id, version AS version, ${this.dialect.nowMillis} AS now_ms ` +
        `FROM ${this.table} WHERE mutex = ${this.p(1)}`,
      params: [mutex],
    };
  }

  /** The database clock alone (health check). */
  now(): BoundSql {
    const from = this.dialect.name === 'oracle' ? ' FROM DUAL' : '';
    return { sql: `SELECT ${this.dialect.nowMillis} AS now_ms${from}`, params: [] };
  }

  /**
   * A statement run first in a transaction to bound every later statement server-side, where
   * the database has a transaction-scoped setting; undefined otherwise. PostgreSQL also ends a
   * transaction left idle (a client that hung mid-way) so its row lock cannot block standbys.
   */
  transactionTimeout(ms: number): BoundSql | undefined {
    if (this.dialect.name !== 'postgres') return undefined;
    const value = `${Math.max(1, Math.trunc(ms))}ms`;
    return {
      sql:
        `SELECT set_config('statement_timeout', ${this.p(1)}, true) AS a, ` +
        `set_config('idle_in_transaction_session_timeout', ${this.p(2)}, true) AS b`,
      params: [value, value],
    };
  }

  /**
   * Bounds one statement server-side where the database has a per-statement form (MariaDB's
   * `SET STATEMENT max_statement_time = <s> FOR`). MySQL, SQLite, SQL Server and Oracle rely on
   * the client-side timeout (and SQLite on the DataSource's busy timeout).
   */
  timed(bound: BoundSql, ms: number): BoundSql {
    if (this.dialect.name !== 'mariadb') return bound;
    const seconds = (Math.max(1, Math.trunc(ms)) / 1000).toFixed(3);
    return { sql: `SET STATEMENT max_statement_time = ${seconds} FOR ${bound.sql}`, params: bound.params };
  }

  /** SQLite: reads the connection's busy timeout (how long a statement waits for the write lock). */
  busyTimeout(): BoundSql | undefined {
    return this.dialect.name === 'sqlite' ? { sql: 'PRAGMA busy_timeout', params: [] } : undefined;
  }
}
