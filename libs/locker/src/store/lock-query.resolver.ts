import { tableName, type SqlDialect } from '@holdfast/core/kit';
import { DEFAULT_LOCK_TABLE_NAMES, type LockTableNames } from './holdfast-lock.table';

/**
 * All SQL on `<prefix>HOLDFAST_LOCK` (or the table and columns named by `lockTableName` and
 * `lockColumns`), built from the dialect's pieces. Lease times are computed by the database
 * (`dialect.nowMillis`), never from the application server's clock. The names are validated
 * identifiers; every value is a bound parameter.
 */
export class LockQueryResolver {
  readonly table: string;
  private readonly ID: string;
  private readonly TIME: string;
  private readonly BROKER_NAME: string;

  constructor(
    readonly dialect: SqlDialect,
    prefix: string,
    names: LockTableNames = DEFAULT_LOCK_TABLE_NAMES,
  ) {
    this.table = tableName(prefix, names.table);
    this.ID = names.id;
    this.TIME = names.time;
    this.BROKER_NAME = names.brokerName;
  }

  private p(index: number): string {
    return this.dialect.placeholder(index);
  }

  /**
   * Creates the row of a lock name if it is missing; never changes an existing row. Params: [id].
   * Run it only after rowExists() said no: an insert that meets a row another transaction holds
   * FOR UPDATE waits for that transaction, which with the database locker lasts as long as the master.
   */
  ensureRow(): string {
    return this.dialect.upsert({ table: this.table, columns: [this.ID], keys: [this.ID] });
  }

  /** A plain read that never waits on row locks. Params: [id]. */
  rowExists(): string {
    return `SELECT ${this.ID} AS id FROM ${this.table} WHERE ${this.ID} = ${this.p(1)}`;
  }

  /**
   * Takes an expired or free lease. Params: [holder, leaseMillis, id]. With `ownToo`, also a
   * lease that still names `holder` (params: [holder, leaseMillis, id, holder]): see
   * LeaseDatabaseLocker.tryAcquire.
   */
  acquireLease(ownToo = false): string {
    const now = this.dialect.nowMillis;
    return (
      `UPDATE ${this.table} SET ${this.BROKER_NAME} = ${this.p(1)}, ${this.TIME} = ${now} + ${this.p(2)} ` +
      `WHERE ${this.ID} = ${this.p(3)} AND (${this.TIME} IS NULL OR ${this.TIME} < ${now}${ownToo ? ` OR ${this.BROKER_NAME} = ${this.p(4)}` : ''})`
    );
  }

  /** Extends the lease only where we still hold it. Params: [leaseMillis, id, holder]. */
  renewLease(): string {
    return (
      `UPDATE ${this.table} SET ${this.TIME} = ${this.dialect.nowMillis} + ${this.p(1)} ` +
      `WHERE ${this.ID} = ${this.p(2)} AND ${this.BROKER_NAME} = ${this.p(3)}`
    );
  }

  /**
   * @ScheduledLock after a run: keeps the lock until lockAtLeastFor after the start (TIME was set
   * to start + lockAtMostFor), or frees it now (TIME NULL) when that has passed. Only the run that took it.
   * Params: [lockAtMostFor - lockAtLeastFor (twice: positional placeholders), id, holder].
   */
  shortenLease(): string {
    const now = this.dialect.nowMillis;
    return (
      `UPDATE ${this.table} SET ${this.TIME} = CASE WHEN ${this.TIME} - ${this.p(1)} > ${now} THEN ${this.TIME} - ${this.p(2)} ` +
      `ELSE NULL END WHERE ${this.ID} = ${this.p(3)} AND ${this.BROKER_NAME} = ${this.p(4)}`
    );
  }

  /** Gives the lease up so a standby can take it at once. Params: [id, holder]. */
  releaseLease(): string {
    return `UPDATE ${this.table} SET ${this.TIME} = NULL, ${this.BROKER_NAME} = NULL WHERE ${this.ID} = ${this.p(1)} AND ${this.BROKER_NAME} = ${this.p(2)}`;
  }

  /** The row with the database clock next to it. Params: [id]. */
  readRow(): string {
    return (
      `SELECT ${this.BROKER_NAME} AS broker_name, ${this.TIME} AS time, ${this.dialect.nowMillis} AS now ` +
      `FROM ${this.table} WHERE ${this.ID} = ${this.p(1)}`
    );
  }

  /**
   * Locks the row for the rest of the transaction, or returns no row at once when another
   * transaction holds it (SKIP LOCKED: a standby polls instead of parking a connection). Params: [id].
   */
  lockRow(): string {
    return `SELECT ${this.ID} AS id FROM ${this.table} WHERE ${this.ID} = ${this.p(1)}${this.dialect.forUpdate(this.dialect.supportsSkipLocked)}`;
  }

  /** Writes the holder and the database time into the locked row. Params: [holder, id]. */
  claimRow(): string {
    return `UPDATE ${this.table} SET ${this.BROKER_NAME} = ${this.p(1)}, ${this.TIME} = ${this.dialect.nowMillis} WHERE ${this.ID} = ${this.p(2)}`;
  }

  /** Keep-alive of the database locker: touches the locked row in the open transaction. Params: [id]. */
  touchRow(): string {
    return `UPDATE ${this.table} SET ${this.TIME} = ${this.dialect.nowMillis} WHERE ${this.ID} = ${this.p(1)}`;
  }

  /**
   * Statements that make the server end the lock's transaction (and free the row) once its
   * client has been silent inside it for `idleMillis`: a vanished master (partition, hung host)
   * cannot keep the lock for hours. The dialect's `idleTransactionTimeouts`: PostgreSQL's is
   * transaction-local, so it works behind PgBouncer; MySQL/MariaDB have only whole seconds and
   * session scope, which is why the lock connection is destroyed, never returned to the pool.
   * Empty where the dialect has no such setting.
   */
  holdTimeouts(idleMillis: number): string[] {
    return this.dialect.idleTransactionTimeouts(idleMillis);
  }
}
