import { SchemaManager, SqlClient, createTableSql, monotonicMillis, type SqlDialect } from '@holdfast/core';
import { resolve } from 'node:path';
import type { DataSource, QueryRunner } from 'typeorm';
import { LockerConfigurationError } from '../errors';
import { HOLDFAST_LOCK_TABLE } from '../store/holdfast-lock.table';
import { LockQueryResolver } from '../store/lock-query.resolver';
import { AbstractLocker } from './abstract.locker';
import type { LockerContext } from './locker.interface';

/** How the lock is physically held: a row lock in a transaction, or SQLite's write lock. */
interface HeldTransaction {
  /** One attempt; true when the lock is now held. */
  acquire(): Promise<boolean>;
  /** Touches the row in the open transaction; false (and let go) when the transaction is gone. */
  touch(): Promise<boolean>;
  release(): Promise<void>;
  readonly held: boolean;
}

/**
 * ActiveMQ's DefaultDatabaseLocker: the master keeps a transaction open that holds the lock
 * row with SELECT ... FOR UPDATE, on a QueryRunner of its own, for as long as it is master.
 * The lock lives exactly as long as that connection: a master that crashes loses it as soon as
 * the server notices the closed socket. Standbys poll with SKIP LOCKED instead of parking a
 * blocked connection, so shutdown never waits on a lock wait and a standby holds no connection.
 *
 * SQLite has no row locks: see SqliteWriteLock.
 */
export class DatabaseLocker extends AbstractLocker {
  private hold!: HeldTransaction;
  private lastTouch = 0;

  override async configure(context: LockerContext): Promise<void> {
    super.configure(context);
    const { dataSource, sql } = context.database();
    const { tablePrefix, schema } = context.options;
    // The one place the database locker differs by database: SQLite locks files, not rows.
    if (sql.dialect.name === 'sqlite') {
      this.hold = new SqliteWriteLock(
        dataSource,
        sql.dialect,
        tablePrefix,
        context.lockName,
        context.holderId,
      );
      return;
    }
    const queries = new LockQueryResolver(sql.dialect, tablePrefix);
    await new SchemaManager(sql).apply(HOLDFAST_LOCK_TABLE, tablePrefix, schema);
    if ((await sql.query(queries.rowExists(), [context.lockName])).length === 0) {
      await sql.execute(queries.ensureRow(), [context.lockName]);
    }
    this.hold = new RowLockTransaction(sql, queries, context.lockName, context.holderId);
  }

  protected async tryAcquire(): Promise<boolean> {
    const started = monotonicMillis();
    const acquired = await this.hold.acquire();
    if (acquired) this.lastTouch = started;
    return acquired;
  }

  async keepAlive(): Promise<boolean> {
    const started = monotonicMillis();
    const alive = await this.hold.touch();
    if (alive) this.lastTouch = started;
    return alive;
  }

  /**
   * The lock lasts as long as the connection, which a failed touch reports at once (keepAlive
   * false). A touch that hangs (a silent network partition) is trusted for one
   * lockAcquireSleepInterval after the last one that came back.
   */
  validUntil(): number {
    return this.hold.held ? this.lastTouch + this.context.lockAcquireSleepInterval : 0;
  }

  async stop(): Promise<void> {
    await this.hold?.release();
  }

  override async holder(): Promise<string | undefined> {
    // Other instances cannot see who holds the row: the claim sits in an uncommitted transaction.
    return this.hold?.held ? this.context.holderId : undefined;
  }
}

/** PostgreSQL, MySQL, MariaDB: SELECT ... FOR UPDATE in a transaction kept open on one QueryRunner. */
class RowLockTransaction implements HeldTransaction {
  private runner?: QueryRunner;
  private tx?: SqlClient;

  constructor(
    private readonly sql: SqlClient,
    private readonly queries: LockQueryResolver,
    private readonly lockName: string,
    private readonly holderId: string,
  ) {}

  get held(): boolean {
    return this.runner !== undefined;
  }

  async acquire(): Promise<boolean> {
    const runner = this.sql.dataSource.createQueryRunner();
    try {
      await runner.connect();
      await runner.startTransaction();
      const tx = new SqlClient(this.sql.dataSource, this.sql.dialect, runner);
      const rows = await tx.query(this.queries.lockRow(), [this.lockName]);
      if (rows.length === 0) {
        await this.abandon(runner);
        return false;
      }
      await tx.execute(this.queries.claimRow(), [this.holderId, this.lockName]);
      this.runner = runner;
      this.tx = tx;
      return true;
    } catch (error) {
      await this.abandon(runner);
      throw error;
    }
  }

  async touch(): Promise<boolean> {
    if (!this.tx) return false;
    try {
      return (await this.tx.execute(this.queries.touchRow(), [this.lockName])) === 1;
    } catch {
      // The transaction is gone with its connection, and the row lock with it.
      await this.release();
      return false;
    }
  }

  async release(): Promise<void> {
    const runner = this.runner;
    this.runner = undefined;
    this.tx = undefined;
    if (runner) await this.abandon(runner);
  }

  private async abandon(runner: QueryRunner): Promise<void> {
    try {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
    } catch {
      // A broken connection: the server rolls back when it sees the socket close.
    }
    await runner.release().catch(() => undefined);
  }
}

interface SqliteDatabase {
  exec(sql: string): unknown;
  prepare(sql: string): { run(...params: unknown[]): { changes: number } };
  close(): void;
  readonly inTransaction: boolean;
}
type SqliteConstructor = new (file: string, options?: { timeout?: number }) => SqliteDatabase;

/**
 * SQLite's equivalent of a held row lock is a write transaction (BEGIN IMMEDIATE) kept open.
 * It is held on a dedicated better-sqlite3 connection because TypeORM's better-sqlite3 driver
 * has one connection for the whole DataSource: a transaction open there would swallow the
 * application's own queries. And it is held on a companion file (`<database>.holdfast-lock`)
 * rather than the application database, because SQLite's write lock covers the whole file: held
 * on the main file it would stop every write of the master application itself and of every
 * other process for as long as this instance is master. The OS drops the file lock when the
 * process dies, so a crashed master's lock is free at once.
 */
export class SqliteWriteLock implements HeldTransaction {
  readonly file: string;
  private readonly Sqlite: SqliteConstructor;
  private readonly queries: LockQueryResolver;
  private readonly createTable: string;
  private db?: SqliteDatabase;

  constructor(
    dataSource: DataSource,
    dialect: SqlDialect,
    tablePrefix: string,
    private readonly lockName: string,
    private readonly holderId: string,
  ) {
    const database = String((dataSource.options as { database?: unknown }).database ?? '');
    if (!database || database === ':memory:' || database.startsWith('file::memory:')) {
      throw new LockerConfigurationError(
        `The database locker needs a SQLite database file that every instance opens; got ${JSON.stringify(database)}. ` +
          `Use a file path, or the shared-file or lease-database locker.`,
      );
    }
    this.file = `${resolve(database)}.holdfast-lock`;
    this.Sqlite = (dataSource.driver as unknown as { sqlite: SqliteConstructor }).sqlite;
    // The companion file has no attached schemas: keep only the unqualified part of the prefix.
    const prefix = tablePrefix.slice(tablePrefix.lastIndexOf('.') + 1);
    this.queries = new LockQueryResolver(dialect, prefix);
    this.createTable = createTableSql('sqlite', HOLDFAST_LOCK_TABLE, prefix).replace(
      /^CREATE TABLE /,
      'CREATE TABLE IF NOT EXISTS ',
    );
  }

  get held(): boolean {
    return this.db !== undefined;
  }

  async acquire(): Promise<boolean> {
    // timeout 0: a held lock answers SQLITE_BUSY at once instead of blocking the event loop.
    const db = new this.Sqlite(this.file, { timeout: 0 });
    try {
      db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      db.close();
      if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY')) return false;
      throw error;
    }
    try {
      db.exec(this.createTable);
      db.prepare(this.queries.ensureRow()).run(this.lockName);
      db.prepare(this.queries.claimRow()).run(this.holderId, this.lockName);
    } catch (error) {
      this.close(db);
      throw error;
    }
    this.db = db;
    return true;
  }

  async touch(): Promise<boolean> {
    const db = this.db;
    if (!db?.inTransaction) return false;
    try {
      return db.prepare(this.queries.touchRow()).run(this.lockName).changes === 1;
    } catch {
      await this.release();
      return false;
    }
  }

  async release(): Promise<void> {
    const db = this.db;
    this.db = undefined;
    if (db) this.close(db);
  }

  private close(db: SqliteDatabase): void {
    try {
      if (db.inTransaction) db.exec('ROLLBACK');
    } catch {
      // closing below releases the lock anyway
    }
    db.close();
  }
}
