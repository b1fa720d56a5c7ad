import { resolve } from 'node:path';
import type { DataSource } from 'typeorm';
import { FileLockNotHeldError } from '../errors/kit.errors';
import type { Statement } from './statement';

/** The part of a better-sqlite3 Database the file lock uses. */
interface SqliteDatabase {
  exec(sql: string): unknown;
  prepare(sql: string): { run(...params: unknown[]): { changes: number } };
  close(): void;
  readonly inTransaction: boolean;
}
type SqliteConstructor = new (file: string, options?: { timeout?: number }) => SqliteDatabase;

/**
 * The file of a SQLite DataSource, as an absolute path; undefined for an in-memory database
 * (which no other process can open, so nothing can be locked across processes on it).
 */
export function sqliteDatabaseFile(dataSource: DataSource): string | undefined {
  const database = String((dataSource.options as { database?: unknown }).database ?? '');
  if (!database || database === ':memory:' || database.startsWith('file::memory:')) return undefined;
  return resolve(database);
}

/**
 * A lock across processes on one SQLite file: a write transaction (BEGIN IMMEDIATE) kept open on
 * a dedicated better-sqlite3 connection, opened from the DataSource's own driver module. It is a
 * connection of its own because TypeORM's better-sqlite3 driver has one connection for the whole
 * DataSource: a transaction open there would swallow the application's own queries. The OS drops
 * the lock when the process dies, so a crashed holder's lock is free at once.
 *
 * Hold it on a companion file rather than the application's database: SQLite's write lock covers
 * the whole file, so held on the main file it would stop every other write for as long as it is held.
 */
export class SqliteFileLock {
  private readonly Sqlite: SqliteConstructor;
  private db?: SqliteDatabase;

  constructor(
    dataSource: DataSource,
    /** The file locked (created when missing). */
    readonly file: string,
  ) {
    this.Sqlite = (dataSource.driver as unknown as { sqlite: SqliteConstructor }).sqlite;
  }

  /** True from a successful `tryAcquire` until `release`. */
  get held(): boolean {
    return this.db !== undefined;
  }

  /** True while the lock's write transaction is open. */
  get inTransaction(): boolean {
    return this.db?.inTransaction ?? false;
  }

  /**
   * One attempt, never waiting: true when the lock is now held, false when another connection
   * holds it. `setup` runs first thing in the lock's transaction; when it throws, the lock is let
   * go and its error rethrown.
   */
  tryAcquire(setup?: () => void): boolean {
    // timeout 0: a held lock answers SQLITE_BUSY at once instead of blocking the event loop.
    const db = new this.Sqlite(this.file, { timeout: 0 });
    try {
      db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      db.close();
      if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY')) return false;
      throw error;
    }
    this.db = db;
    try {
      setup?.();
    } catch (error) {
      this.release();
      throw error;
    }
    return true;
  }

  /** Runs statements without parameters (DDL) in the lock's transaction. */
  exec(sql: string): void {
    this.connection().exec(sql);
  }

  /** Runs `s` in the lock's transaction; the number of rows it changed. */
  run(s: Statement): number {
    return this.connection()
      .prepare(s.sql)
      .run(...s.params).changes;
  }

  /** Lets the lock go: rolls its transaction back and closes its connection. */
  release(): void {
    const db = this.db;
    this.db = undefined;
    if (!db) return;
    try {
      if (db.inTransaction) db.exec('ROLLBACK');
    } catch {
      // closing below releases the lock anyway
    }
    db.close();
  }

  private connection(): SqliteDatabase {
    if (!this.db) throw new FileLockNotHeldError(this.file);
    return this.db;
  }
}
