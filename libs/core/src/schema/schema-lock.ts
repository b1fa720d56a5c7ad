import { createHash } from 'node:crypto';
import type { SqlClient } from '../database/sql-client';
import { sqlErrorCode } from '../database/sql-errors';
import { StatementBinder } from '../database/statement';
import { SchemaLockTimeoutError } from '../errors/holdfast.error';

/** The schema step's lock for one table (see `SchemaLock`). */
export interface SchemaLockSpec {
  /** The prefixed table the step is for (named in errors). */
  table: string;
  /** The lock's name, the same on every instance for that table. */
  key: string;
  /** How long to wait for another instance's step. */
  timeoutMs: number;
}

type Step<T> = (locked: SqlClient) => Promise<T>;

/**
 * The database lock the schema step (`SchemaManager.apply`) runs under, so that replicas booting
 * at once take turns: PostgreSQL `pg_advisory_xact_lock` in a transaction, MySQL/MariaDB
 * `GET_LOCK` on one connection, SQLite the write lock (`BEGIN IMMEDIATE`); no lock where Holdfast
 * does not run SQL (SQL Server, Oracle). A wait past `spec.timeoutMs` fails with a
 * `SchemaLockTimeoutError` that says how to find the holder.
 */
export class SchemaLock {
  constructor(readonly spec: SchemaLockSpec) {}

  /** Runs `step` under the lock, on the client of the connection that holds it. */
  run<T>(sql: SqlClient, step: Step<T>): Promise<T> {
    switch (sql.dialect.name) {
      case 'postgres':
        return postgresSchemaLock(sql, this.spec, step);
      case 'mysql':
      case 'mariadb':
        return mysqlSchemaLock(sql, this.spec, step);
      case 'sqlite':
        return sqliteSchemaLock(sql, this.spec, step);
      default:
        return step(sql);
    }
  }
}

/**
 * The schema step under `pg_advisory_xact_lock` in a transaction (works behind PgBouncer in
 * transaction mode), its wait bounded by `lock_timeout`.
 */
function postgresSchemaLock<T>(sql: SqlClient, lock: SchemaLockSpec, step: Step<T>): Promise<T> {
  return sql.transaction(async (tx) => {
    // Bounds the lock wait (and the DDL's own lock waits) for this transaction only.
    const bound = new StatementBinder(tx.dialect);
    await tx.query(
      bound.statement(`SELECT set_config('lock_timeout', ${bound.bind(`${lock.timeoutMs}ms`)}, true)`),
    );
    try {
      const b = new StatementBinder(tx.dialect);
      await tx.query(
        b.statement(`SELECT pg_advisory_xact_lock(CAST(${b.bind(advisoryKey(lock.key))} AS BIGINT))`),
      );
    } catch (error) {
      if (sqlErrorCode(error) === '55P03') {
        throw new SchemaLockTimeoutError(
          lock.table,
          lock.timeoutMs,
          `PostgreSQL advisory lock ${advisoryKey(lock.key)}: see pg_locks WHERE locktype = 'advisory'.`,
          error,
        );
      }
      throw error;
    }
    return step(tx);
  });
}

/** A signed 64-bit advisory-lock key for a name (the first 8 bytes of its SHA-256). */
function advisoryKey(name: string): string {
  return createHash('sha256').update(name).digest().readBigInt64BE(0).toString();
}

/** The schema step under `GET_LOCK` on one connection (a session lock, released after the step). */
function mysqlSchemaLock<T>(sql: SqlClient, lock: SchemaLockSpec, step: Step<T>): Promise<T> {
  return sql.session(async (connection) => {
    const b = new StatementBinder(connection.dialect);
    // GET_LOCK names are server-wide and at most 64 characters: scope them to the schema.
    const name = () =>
      `LEFT(CONCAT('holdfast:schema:', SHA1(CONCAT(COALESCE(DATABASE(), ''), '.', ${b.bind(lock.key)}))), 64)`;
    const getLock = `SELECT GET_LOCK(${name()}, ${b.bind(Math.ceil(lock.timeoutMs / 1000))}) AS got, ${name()} AS lock_name`;
    const [row] = await connection.query<{ got: unknown; lock_name: string }>(b.statement(getLock));
    if (Number(row?.got) !== 1) {
      throw new SchemaLockTimeoutError(
        lock.table,
        lock.timeoutMs,
        `MySQL/MariaDB GET_LOCK('${row?.lock_name}'): SELECT IS_USED_LOCK('${row?.lock_name}') names the holder's connection.`,
      );
    }
    try {
      return await step(connection);
    } finally {
      const release = new StatementBinder(connection.dialect);
      await connection
        .query(release.statement(`SELECT RELEASE_LOCK(${release.bind(row.lock_name)})`))
        .catch(() => undefined);
    }
  });
}

/** The schema step under the database's write lock (`BEGIN IMMEDIATE`), held until it commits. */
function sqliteSchemaLock<T>(sql: SqlClient, lock: SchemaLockSpec, step: Step<T>): Promise<T> {
  return sql
    .transaction((tx) => step(tx))
    .catch((error: unknown) => {
      if (sqlErrorCode(error) !== 'SQLITE_BUSY') throw error;
      const busy = (sql.dataSource.options as { timeout?: number }).timeout ?? 5_000;
      throw new SchemaLockTimeoutError(
        lock.table,
        busy,
        `SQLite write lock: another connection keeps a write transaction open; the wait is the DataSource's 'timeout'.`,
        error,
      );
    });
}
