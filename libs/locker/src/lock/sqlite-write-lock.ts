import { createTableSql, sqliteDatabaseFile, SqliteFileLock, type SqlClient } from '@holdfast/core/kit';
import { LockerConfigurationError } from '../errors';
import { DEFAULT_LOCK_TABLE_NAMES, lockTableSpec, type LockTableNames } from '../store/holdfast-lock.table';
import { LockQueryResolver } from '../store/lock-query.resolver';
import type { HeldTransaction } from './held-transaction';

/** What a SqliteWriteLock locks, and in whose name. */
export interface SqliteWriteLockContext {
  readonly sql: SqlClient;
  readonly tablePrefix: string;
  readonly lockName: string;
  readonly holderId: string;
  readonly names?: LockTableNames;
}

/**
 * SQLite's equivalent of a held row lock is a write transaction kept open (core's
 * SqliteFileLock), on a companion file (`<database>.holdfast-lock`) rather than the application
 * database: SQLite's write lock covers the whole file, so held on the main file it would stop every
 * write of the master application itself and of every other process for as long as this instance
 * is master. The lock row in the companion file names the master.
 */
export class SqliteWriteLock implements HeldTransaction {
  readonly file: string;
  private readonly lock: SqliteFileLock;
  private readonly queries: LockQueryResolver;
  private readonly createTable: string;
  private readonly lockName: string;
  private readonly holderId: string;

  constructor(context: SqliteWriteLockContext) {
    const { dataSource, dialect } = context.sql;
    const database = sqliteDatabaseFile(dataSource);
    if (database === undefined) {
      const given = String((dataSource.options as { database?: unknown }).database ?? '');
      throw new LockerConfigurationError(
        `The database locker needs a SQLite database file that every instance opens; got ${JSON.stringify(given)}. ` +
          `Use a file path, or the shared-file or lease-database locker.`,
      );
    }
    this.file = `${database}.holdfast-lock`;
    this.lock = new SqliteFileLock(dataSource, this.file);
    this.lockName = context.lockName;
    this.holderId = context.holderId;
    const names = context.names ?? DEFAULT_LOCK_TABLE_NAMES;
    // The companion file has no attached schemas: keep only the unqualified part of the prefix.
    const prefix = context.tablePrefix.slice(context.tablePrefix.lastIndexOf('.') + 1);
    this.queries = new LockQueryResolver(dialect, prefix, names);
    this.createTable = createTableSql(dialect, lockTableSpec(names), prefix).replace(
      /^CREATE TABLE /,
      'CREATE TABLE IF NOT EXISTS ',
    );
  }

  get held(): boolean {
    return this.lock.held;
  }

  async acquire(): Promise<boolean> {
    return this.lock.tryAcquire(() => {
      this.lock.exec(this.createTable);
      this.lock.run(this.queries.ensureRow(this.lockName));
      this.lock.run(this.queries.claimRow(this.lockName, this.holderId));
    });
  }

  async touch(): Promise<boolean> {
    if (!this.lock.inTransaction) return false;
    try {
      return this.lock.run(this.queries.touchRow(this.lockName)) === 1;
    } catch {
      await this.release();
      return false;
    }
  }

  async release(): Promise<void> {
    this.lock.release();
  }
}
