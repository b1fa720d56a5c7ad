import { statement, StatementBinder, tableName, type SqlDialect, type Statement } from '@holdfast/core/kit';
import { SIMBA_MUTEX_TABLE } from './simba-mutex.table';
import { TIMELINE_MARKER } from './failover-grace';

/**
 * Every SQL statement on `simba_mutex`, built from the core dialect pieces and returned as core
 * Statements (text and values; the repository runs them). `now` is always the database clock
 * (`dialect.nowMillis`) evaluated inside the statement, never an app timestamp.
 */
export class MutexQueryResolver {
  readonly table: string;

  constructor(
    private readonly dialect: SqlDialect,
    prefix: string,
  ) {
    this.table = tableName(prefix, SIMBA_MUTEX_TABLE.name);
  }

  private binder(): StatementBinder {
    return new StatementBinder(this.dialect);
  }

  /**
   * Creates the rows of mutexes that are missing, free (`owner_id` ''), with a value for every
   * column (Simba's DDL has no defaults); an existing row is left alone, whoever created it.
   */
  ensureRows(mutexes: readonly string[]): Statement {
    const sql = this.dialect.insertMissing({
      table: this.table,
      columns: ['mutex', 'acquired_at', 'ttl_at', 'transition_at', 'owner_id', 'version'],
      key: 'mutex',
      rows: mutexes.length,
      row: (mutex) => `${mutex}, 0, 0, 0, '', 0`,
    });
    return statement(sql, [...mutexes]);
  }

  /**
   * Simba's conditional acquire: free once `transition_at` has passed, or a renewal by the owner
   * while its transition is still running. `version + 1` is Simba's optimistic lock; `acquired_at`
   * (the fencing token) is the database time, or the previous token + 1 if the clock is behind it.
   */
  acquire(mutex: string, contenderId: string, ttlMs: number, transitionMs: number): Statement {
    const b = this.binder();
    const now = this.dialect.nowMillis;
    return b.statement(
      `UPDATE ${this.table} SET acquired_at = ${this.nextToken()}, ttl_at = ${now} + ${b.bind(Math.trunc(ttlMs))}, ` +
        `transition_at = ${now} + ${b.bind(Math.trunc(ttlMs + transitionMs))}, owner_id = ${b.bind(contenderId)}, version = version + 1 ` +
        `WHERE mutex = ${b.bind(mutex)} AND (transition_at < ${now} OR (owner_id = ${b.bind(contenderId)} AND transition_at > ${now}))`,
    );
  }

  /**
   * Acquire-or-renew of many mutexes in one statement, Simba's condition per row: a row is taken
   * once its `transition_at` has passed (owner set to the contender named for that mutex), and a
   * row in `renewals` is renewed while its owner (one of the renewing contenders) is still in its
   * transition. Renewals check `owner_id IN (renewing ids)` rather than each exact pair: a row of
   * the list owned by another contender of this instance would be renewed for that contender,
   * which cannot happen while the statement runs before the renewing owner's deadline (the local
   * deadline falls a statement timeout before `transition_at`).
   */
  acquireMany(
    takes: ReadonlyArray<{ mutex: string; contenderId: string }>,
    renewals: ReadonlyArray<{ mutex: string; contenderId: string }>,
    ttlMs: number,
    transitionMs: number,
  ): Statement {
    const b = this.binder();
    const now = this.dialect.nowMillis;
    const all = [...takes, ...renewals];
    const ids = new Set(all.map((t) => t.contenderId));
    const newOwner =
      ids.size === 1
        ? b.bind(all[0].contenderId)
        : `CASE mutex ${all.map((t) => `WHEN ${b.bind(t.mutex)} THEN ${b.bind(t.contenderId)}`).join(' ')} END`;
    // MySQL assigns left to right and later assignments see earlier ones: owner_id goes first,
    // while transition_at still holds the old value.
    const set =
      `owner_id = CASE WHEN transition_at < ${now} THEN ${newOwner} ELSE owner_id END, ` +
      `acquired_at = ${this.nextToken()}, ttl_at = ${now} + ${b.bind(Math.trunc(ttlMs))}, ` +
      `transition_at = ${now} + ${b.bind(Math.trunc(ttlMs + transitionMs))}, version = version + 1`;
    let where = `mutex IN (${b.list(all.map((t) => t.mutex))}) AND (transition_at < ${now}`;
    if (renewals.length) {
      const renewIds = [...new Set(renewals.map((r) => r.contenderId))];
      where +=
        ` OR (mutex IN (${b.list(renewals.map((r) => r.mutex))}) AND owner_id IN (${b.list(renewIds)}) ` +
        `AND transition_at > ${now})`;
    }
    return b.statement(`UPDATE ${this.table} SET ${set} WHERE ${where})`);
  }

  /** The rows of many mutexes, with the database clock read in the same statement. */
  selectMany(mutexes: readonly string[]): Statement {
    const b = this.binder();
    return b.statement(`${this.selectRows()} WHERE mutex IN (${b.list(mutexes)})`);
  }

  /** The columns of a row, and the database clock read in the same statement. */
  private selectRows(): string {
    return (
      `SELECT mutex AS mutex, acquired_at AS acquired_at, ttl_at AS ttl_at, transition_at AS transition_at, ` +
      `owner_id AS owner_id, version AS version, ${this.dialect.nowMillis} AS now_ms FROM ${this.table}`
    );
  }

  /** `acquired_at` of a grant: the database time, at least the previous token + 1. */
  private nextToken(): string {
    return this.dialect.atLeastAfter(this.dialect.nowMillis, 'acquired_at');
  }

  /**
   * Gives the mutex up: no owner, and acquirable at once (transition in the past). `acquired_at`
   * is kept: the next grant's fencing token is derived from it.
   */
  release(mutex: string, contenderId: string): Statement {
    const b = this.binder();
    const now = this.dialect.nowMillis;
    return b.statement(
      `UPDATE ${this.table} SET owner_id = '', ttl_at = ${now} - 1, transition_at = ${now} - 1, ` +
        `version = version + 1 WHERE mutex = ${b.bind(mutex)} AND owner_id = ${b.bind(contenderId)}`,
    );
  }

  /** The row with the database clock read in the same statement. */
  select(mutex: string): Statement {
    const b = this.binder();
    return b.statement(`${this.selectRows()} WHERE mutex = ${b.bind(mutex)}`);
  }

  /**
   * Every mutex of the table, by name, with the database clock read in the same statement (the
   * timeline marker of the failover grace is a row, not a mutex: left out).
   */
  selectAll(): Statement {
    const b = this.binder();
    return b.statement(`${this.selectRows()} WHERE mutex <> ${b.bind(TIMELINE_MARKER)} ORDER BY mutex`);
  }

  /** The database clock alone (health check). */
  now(): Statement {
    return statement(this.dialect.selectRow(`${this.dialect.nowMillis} AS now_ms`));
  }

  /**
   * A statement run first in a transaction to bound every later statement server-side, where
   * the database has a transaction-scoped setting; undefined otherwise. PostgreSQL also ends a
   * transaction left idle (a client that hung mid-way) so its row lock cannot block standbys.
   */
  transactionTimeout(ms: number): Statement | undefined {
    return this.dialect.transactionStatementTimeout(ms);
  }

  /**
   * Bounds one statement server-side where the database has a per-statement form (MariaDB's
   * `SET STATEMENT max_statement_time = <s> FOR`). MySQL, SQLite, SQL Server and Oracle rely on
   * the client-side timeout (and SQLite on the DataSource's busy timeout).
   */
  timed(bound: Statement, ms: number): Statement {
    const sql = this.dialect.withStatementTimeout(bound.sql, ms);
    return sql === bound.sql ? bound : statement(sql, bound.params);
  }

  /** SQLite: reads the connection's busy timeout (how long a statement waits for the write lock). */
  busyTimeout(): Statement | undefined {
    const sql = this.dialect.busyTimeoutQuery();
    return sql === undefined ? undefined : statement(sql);
  }
}
