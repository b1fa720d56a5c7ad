import type { ColumnType } from './column-type';
import { Dialect } from './dialect';
import type { SqliteAffinity } from './sqlite-affinity';
import type { TimestampSql, TimestampStorage } from './timestamp-sql';

export type { ColumnType } from './column-type';

export interface UpsertSpec {
  /** Fully prefixed table name (already validated). */
  table: string;
  /** Every column written, in parameter order. */
  columns: readonly string[];
  /** Columns of the primary key (a subset of `columns`). */
  keys: readonly string[];
  /** Number of rows (parameter groups); default 1. */
  rows?: number;
}

/**
 * Everything that differs between databases, in one place. Modules build their SQL from these
 * pieces and never branch on the dialect themselves. A dialect only writes SQL text: it runs
 * nothing (the catalog reads and the schema lock that run SQL are `Catalog` and `SchemaLock`, in
 * `schema/`).
 */
export interface SqlDialect {
  readonly name: Dialect;
  /** Bind parameter for the 1-based position `index`. */
  placeholder(index: number): string;
  /** Comma-separated placeholders `from`..`from+count-1`. */
  placeholders(count: number, from?: number): string;
  /** An SQL expression for the database clock, in epoch milliseconds (an integer). */
  readonly nowMillis: string;
  /** A single-statement insert-or-update of `rows` rows on the key columns. */
  upsert(spec: UpsertSpec): string;
  /**
   * True where the database is an embedded file behind one connection (SQLite): there is no pool
   * to wait for and no row lock; a writer takes the whole database's write lock.
   */
  readonly singleConnection: boolean;
  /** True when the dialect has `SELECT ... FOR UPDATE SKIP LOCKED`. */
  readonly supportsSkipLocked: boolean;
  /** The row-locking suffix for a SELECT, or '' where the dialect locks otherwise (SQLite). */
  forUpdate(skipLocked?: boolean): string;
  /** `SELECT ...` with a row limit: returns the query text with the limit applied. */
  limit(select: string, count: number): string;
  /** `SELECT <list>` of expressions without a table (Oracle's reads `FROM DUAL`). */
  selectRow(list: string): string;
  /** DDL type for a logical column type. */
  columnType(type: ColumnType): string;
  /** Converts a timestamp to the bound parameter form the driver stores exactly (ms). */
  timestampParam(date: Date): unknown;
  /** Reads a timestamp column value back to a Date, exact to the millisecond. */
  readTimestamp(value: unknown): Date;
  /**
   * Optional (PostgreSQL): a row source made of one bound array per column,
   * `UNNEST($1::text[], $2::bytea[]) AS u(a, b)`, for `INSERT ... SELECT` of many rows with a
   * handful of parameters instead of one per value. Undefined where the database has no such thing.
   */
  arraySource?(columns: ReadonlyArray<{ name: string; type: ColumnType; placeholder: string }>): string;
  /**
   * SQL for a timestamp column compared with the database clock (now, an absolute time, now plus
   * a delta, reading as epoch ms, epoch ms to a timestamp). `storage`: the live column's form
   * where the dialect has two (MySQL/MariaDB `DATETIME`, the default, or `TIMESTAMP`).
   */
  timestampSql(storage?: TimestampStorage): TimestampSql;
  /**
   * An SQL expression of the server's timeline, a number that changes at every promotion of a
   * standby (PostgreSQL: from the current WAL file's name), where a promotion can lose commits
   * that a client saw committed (asynchronous replication). Undefined where it cannot or there is
   * no promotion (MySQL/MariaDB, whose Galera replication loses no commit; SQLite).
   */
  readonly timeline: string | undefined;
  /**
   * True where a WITH clause can hold a data-modifying statement whose RETURNING rows the main
   * query reads (PostgreSQL): `WITH u AS (UPDATE … RETURNING …) SELECT … FROM u ORDER BY …`.
   */
  readonly writableCte: boolean;
  /**
   * `key` is one of the keys `subquery` selects. PostgreSQL runs the subquery once, as an array
   * (`key = ANY(ARRAY(…))`), so the outer statement finds those rows by the key's index whatever
   * the table's statistics say: with `IN (…)` a queue table filled since its last ANALYZE is
   * read whole (a hash semi-join over a sequential scan). `key IN (…)` elsewhere.
   */
  keyIn(key: string, subquery: string): string;
  /** Number of rows a write statement changed, from `dataSource.query` / QueryRunner raw results. */
  affectedRows(result: unknown): number;
  /** True where CREATE TABLE (`'table'`) or CREATE INDEX (`'index'`) takes `IF NOT EXISTS`. */
  supportsIfNotExists(object: 'table' | 'index'): boolean;
  /**
   * What follows a CREATE TABLE's column list for a table of `fillFactor` (see TableSpec):
   * PostgreSQL's ` WITH (fillfactor = n)`, nothing elsewhere.
   */
  tableStorage(fillFactor: number | undefined): string;
  /**
   * Where the database decides what a column holds by its type affinity (SQLite): the affinities
   * a column may have to hold values of `kind` as Holdfast binds them. Undefined elsewhere.
   */
  columnAffinities(kind: ColumnType['kind']): readonly SqliteAffinity[] | undefined;
  /**
   * True where a failed statement aborts the transaction it ran in (PostgreSQL): a statement that
   * may fail inside one runs behind a savepoint.
   */
  readonly errorAbortsTransaction: boolean;
  /**
   * True where statements cross a network to a server, so that a client bounds its waits on it
   * (`SqlClientOptions.statementTimeout`): PostgreSQL, MySQL, MariaDB.
   */
  readonly boundsWaits: boolean;
  /**
   * The statements, each sent on its own, that open a transaction the server ends once its client
   * has been silent inside it for `idleMs` (whole ms; 0: no bound), at isolation `level` (upper
   * case; undefined: the session's). Undefined where TypeORM's `startTransaction` opens it.
   */
  beginTransaction(idleMs: number, level?: string): string[] | undefined;
  /** The statement that commits or rolls back; undefined where TypeORM's own methods do. */
  endTransaction(outcome: 'commit' | 'rollback'): string | undefined;
  /**
   * The statement that gives the session its server default back after a bounded transaction
   * with `idleMs`, sent apart (MySQL's `wait_timeout`); undefined when there is nothing to reset,
   * or the reset goes with the COMMIT (MariaDB).
   */
  sessionReset(idleMs: number): string | undefined;
  /**
   * Where a bounded transaction's statements go out together, in compound statements (MariaDB):
   * see `openBoundedTransaction`. Undefined elsewhere.
   */
  readonly compoundTransactions?: CompoundTransactionSql;
  /**
   * The driver options (TypeORM `extra`) of a pool of `size` connections that it keeps open once
   * opened (a coordination lane, see ConnectionBudget): pg `max` and `min` (pg-pool closes no idle
   * connection below `min`), mysql2 `connectionLimit` and `maxIdle` (it closes idle connections
   * only beyond `maxIdle`).
   */
  poolSizeOptions(size: number): Record<string, number>;
}

/** A bounded transaction sent in compound statements (MariaDB): see `SqlDialect.compoundTransactions`. */
export interface CompoundTransactionSql {
  /** The statements that open it (`idleMs` whole ms, 0: no bound; `level` upper case). */
  opening(idleMs: number, level: string | undefined): string[];
  /** The statements that end it and give the session its default back. */
  closing(outcome: 'commit' | 'rollback', idleMs: number): string[];
  /** Several statements as one. */
  compound(statements: readonly string[]): string;
}
