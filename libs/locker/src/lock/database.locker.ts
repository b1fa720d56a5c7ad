import { createTableSql, declarePoolNeed, monotonicMillis, type SqlClient } from '@holdfast/core/kit';
import { resolve } from 'node:path';
import { LockerConfigurationError } from '../errors';
import { DEFAULT_LOCK_TABLE_NAMES, lockTableSpec, type LockTableNames } from '../store/holdfast-lock.table';
import { LockQueryResolver } from '../store/lock-query.resolver';
import { prepareLockRow } from '../store/lock-row';
import { AbstractLocker } from './abstract.locker';
import { LockConnection } from './lock-connection';
import type { LockerContext } from './locker.interface';

/** How the lock is physically held: a row lock in a transaction, or SQLite's write lock. */
interface HeldTransaction {
  /** One attempt; true when the lock is now held. */
  acquire(): Promise<boolean>;
  /** Touches the row in the open transaction; false (and let go) when the transaction is gone. */
  touch(): Promise<boolean>;
  release(): Promise<void>;
  /** Closes what the lock kept open while not held (the reserved connection). */
  dispose?(): Promise<void>;
  readonly held: boolean;
}

/**
 * ActiveMQ's DefaultDatabaseLocker: the master keeps a transaction open that holds the lock
 * row with SELECT ... FOR UPDATE, on a connection of its own, for as long as it is master.
 * The lock lives exactly as long as that transaction: a master that crashes loses it as soon as
 * the server notices the closed socket, and one that vanishes silently (a partition, a hung
 * host) loses it when the server ends its transaction after `idleTimeout` of silence (see
 * LockQueryResolver.holdTimeouts), a little above the keep-alive period. Standbys poll with
 * SKIP LOCKED instead of parking a blocked connection, so shutdown never waits on a lock wait.
 *
 * The connection is reserved from the DataSource's pool (LockConnection): keep-alives never
 * queue behind the application's work, every wait is bounded, and a connection that held the
 * lock is destroyed on release or demotion rather than handed back to the pool.
 *
 * SQLite has no row locks: see SqliteWriteLock.
 */
export class DatabaseLocker extends AbstractLocker {
  private hold!: HeldTransaction;
  private lastTouch = 0;
  /** How long the server lets the lock transaction sit silent before ending it (0: never). */
  idleTimeout = 0;

  override async configure(context: LockerContext): Promise<void> {
    super.configure(context);
    const { sql } = context.database();
    const { tablePrefix, lockTable } = context.options;
    // The one place the database locker differs by database: SQLite locks files, not rows.
    if (sql.dialect.singleConnection) {
      this.hold = new SqliteWriteLock(sql, tablePrefix, context.lockName, context.holderId, lockTable);
      return;
    }
    const queries = await prepareLockRow(sql, context.options, context.lockName);
    const keepAlive = context.lockKeepAlivePeriod;
    this.idleTimeout = keepAlive > 0 ? idleTimeoutFor(keepAlive) : 0;
    if (keepAlive === 0) {
      this.logger.warn(
        `Lock '${context.lockName}': lockKeepAlivePeriod is 0, so the server cannot be asked to end a silent ` +
          `master's transaction: a master that vanishes without closing its connection keeps the lock until the ` +
          `server notices the dead connection (TCP keepalive, possibly hours). Set lockKeepAlivePeriod to bound it.`,
      );
    }
    declareLockConnection(sql, context.lockName);
    const connection = new LockConnection(
      sql,
      statementTimeoutFor(context.lockAcquireSleepInterval, keepAlive),
      this.logger,
    );
    this.hold = new RowLockTransaction(
      connection,
      queries,
      context.lockName,
      context.holderId,
      this.idleTimeout,
    );
    // The server frees the row the moment this connection closes: learn it now, not at the next keep-alive.
    connection.onClosed = () => this.suspectedLoss?.();
  }

  private suspectedLoss?: () => void;

  onSuspectedLoss(listener: () => void): void {
    this.suspectedLoss = listener;
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
   * A failed touch reports a lost lock at once (keepAlive false). A touch that hangs (a silent
   * partition) is trusted until shortly before the server would end the silent transaction,
   * counted from when the last good touch was sent: by then this instance has demoted, before any
   * standby can get the row. Without a server-side bound (SQLite, keep-alive 0): one
   * lockAcquireSleepInterval.
   */
  validUntil(): number {
    if (!this.hold.held) return 0;
    const window =
      this.idleTimeout > 0
        ? this.idleTimeout - safetyMargin(this.idleTimeout)
        : this.context.lockAcquireSleepInterval;
    return this.lastTouch + window;
  }

  async stop(): Promise<void> {
    await this.hold?.release();
  }

  async dispose(): Promise<void> {
    await this.hold?.dispose?.();
  }

  override async holder(): Promise<string | undefined> {
    // Other instances cannot see who holds the row: the claim sits in an uncommitted transaction.
    return this.hold?.held ? this.context.holderId : undefined;
  }
}

/** The server ends a silent lock transaction this long after its last statement. */
export function idleTimeoutFor(keepAlivePeriod: number): number {
  return Math.ceil(keepAlivePeriod * 1.5) + 1_000;
}

/** The master stops trusting its lock this long before the server could end its transaction. */
function safetyMargin(idleTimeout: number): number {
  return Math.min(2_000, Math.floor(idleTimeout / 4));
}

/** A bound for each lock statement and for the wait for a pooled connection. */
export function statementTimeoutFor(lockAcquireSleepInterval: number, keepAlivePeriod: number): number {
  const base =
    keepAlivePeriod > 0 ? Math.min(keepAlivePeriod, lockAcquireSleepInterval) : lockAcquireSleepInterval;
  return Math.max(2_000, Math.min(base, 10_000));
}

/** The lockers on PostgreSQL/MySQL/MariaDB keep one pooled connection each (LockConnection). */
export function declareLockConnection(sql: SqlClient, lockName: string): void {
  declarePoolNeed(sql, { component: `locker '${lockName}'`, connections: 1, reserved: true });
}

/** PostgreSQL, MySQL, MariaDB: SELECT ... FOR UPDATE in a transaction kept open on the lock connection. */
class RowLockTransaction implements HeldTransaction {
  private holding = false;

  constructor(
    private readonly connection: LockConnection,
    private readonly queries: LockQueryResolver,
    private readonly lockName: string,
    private readonly holderId: string,
    private readonly idleTimeout: number,
  ) {}

  get held(): boolean {
    return this.holding;
  }

  async acquire(): Promise<boolean> {
    // A failure anywhere destroys the connection, and the server rolls the transaction back.
    return this.connection.run('Acquiring the lock', async (tx) => {
      const runner = this.connection.queryRunner!;
      await runner.startTransaction();
      const rows = await tx.query(this.queries.lockRow(), [this.lockName]);
      if (rows.length === 0) {
        await runner.rollbackTransaction();
        return false;
      }
      if (this.idleTimeout > 0) {
        for (const statement of this.queries.holdTimeouts(this.idleTimeout)) await tx.query(statement);
      }
      await tx.execute(this.queries.claimRow(), [this.holderId, this.lockName]);
      this.holding = true;
      return true;
    });
  }

  async touch(): Promise<boolean> {
    if (!this.holding) return false;
    try {
      const changed = await this.connection.run('Keep-alive of the lock', (tx) =>
        tx.execute(this.queries.touchRow(), [this.lockName]),
      );
      if (changed === 1) return true;
    } catch {
      // The connection is destroyed: the transaction, and the row lock with it, are gone.
    }
    await this.release();
    return false;
  }

  /**
   * Lets the lock go and gives up the reserved connection: a standby that stops must not keep a
   * pooled connection checked out (the DataSource's pool waits for it when it closes).
   */
  async release(): Promise<void> {
    const wasHolding = this.holding;
    this.holding = false;
    if (wasHolding && this.connection.connected) {
      // A quick rollback frees the row for a standby at once; bounded, and the connection is
      // destroyed either way (it carries the lock's session settings).
      await this.connection
        .run('Releasing the lock', async () => {
          const runner = this.connection.queryRunner!;
          if (runner.isTransactionActive) await runner.rollbackTransaction();
        })
        .catch(() => undefined);
    }
    this.connection.destroy();
  }

  async dispose(): Promise<void> {
    this.holding = false;
    this.connection.destroy();
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
    sql: SqlClient,
    tablePrefix: string,
    private readonly lockName: string,
    private readonly holderId: string,
    names: LockTableNames = DEFAULT_LOCK_TABLE_NAMES,
  ) {
    const { dataSource, dialect } = sql;
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
    this.queries = new LockQueryResolver(dialect, prefix, names);
    this.createTable = createTableSql('sqlite', lockTableSpec(names), prefix).replace(
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
