import { tableName, type SqlDialect } from '@holdfast/core/kit';
import { HOLDFAST_LOCK_TABLE } from './holdfast-lock.table';

/**
 * All SQL on `<prefix>HOLDFAST_LOCK`, built from the dialect's pieces. Lease times are computed
 * by the database (`dialect.nowMillis`), never from the application server's clock.
 */
export class LockQueryResolver {
  readonly table: string;

  constructor(
    readonly dialect: SqlDialect,
    prefix: string,
  ) {
    this.table = tableName(prefix, HOLDFAST_LOCK_TABLE.name);
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
    return this.dialect.upsert({ table: this.table, columns: ['ID'], keys: ['ID'] });
  }

  /** A plain read that never waits on row locks. Params: [id]. */
  rowExists(): string {
    return `SELECT ID AS id FROM ${this.table} WHERE ID = ${this.p(1)}`;
  }

  /**
   * Takes an expired or free lease. Params: [holder, leaseMillis, id]. With `ownToo`, also a
   * lease that still names `holder` (params: [holder, leaseMillis, id, holder]): see
   * LeaseDatabaseLocker.tryAcquire.
   */
  acquireLease(ownToo = false): string {
    const now = this.dialect.nowMillis;
    return (
      `UPDATE ${this.table} SET BROKER_NAME = ${this.p(1)}, TIME = ${now} + ${this.p(2)} ` +
      `WHERE ID = ${this.p(3)} AND (TIME IS NULL OR TIME < ${now}${ownToo ? ` OR BROKER_NAME = ${this.p(4)}` : ''})`
    );
  }

  /** Extends the lease only where we still hold it. Params: [leaseMillis, id, holder]. */
  renewLease(): string {
    return (
      `UPDATE ${this.table} SET TIME = ${this.dialect.nowMillis} + ${this.p(1)} ` +
      `WHERE ID = ${this.p(2)} AND BROKER_NAME = ${this.p(3)}`
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
      `UPDATE ${this.table} SET TIME = CASE WHEN TIME - ${this.p(1)} > ${now} THEN TIME - ${this.p(2)} ` +
      `ELSE NULL END WHERE ID = ${this.p(3)} AND BROKER_NAME = ${this.p(4)}`
    );
  }

  /** Gives the lease up so a standby can take it at once. Params: [id, holder]. */
  releaseLease(): string {
    return `UPDATE ${this.table} SET TIME = NULL, BROKER_NAME = NULL WHERE ID = ${this.p(1)} AND BROKER_NAME = ${this.p(2)}`;
  }

  /** The row with the database clock next to it. Params: [id]. */
  readRow(): string {
    return (
      `SELECT BROKER_NAME AS broker_name, TIME AS time, ${this.dialect.nowMillis} AS now ` +
      `FROM ${this.table} WHERE ID = ${this.p(1)}`
    );
  }

  /**
   * Locks the row for the rest of the transaction, or returns no row at once when another
   * transaction holds it (SKIP LOCKED: a standby polls instead of parking a connection). Params: [id].
   */
  lockRow(): string {
    return `SELECT ID AS id FROM ${this.table} WHERE ID = ${this.p(1)}${this.dialect.forUpdate(this.dialect.supportsSkipLocked)}`;
  }

  /** Writes the holder and the database time into the locked row. Params: [holder, id]. */
  claimRow(): string {
    return `UPDATE ${this.table} SET BROKER_NAME = ${this.p(1)}, TIME = ${this.dialect.nowMillis} WHERE ID = ${this.p(2)}`;
  }

  /** Keep-alive of the database locker: touches the locked row in the open transaction. Params: [id]. */
  touchRow(): string {
    return `UPDATE ${this.table} SET TIME = ${this.dialect.nowMillis} WHERE ID = ${this.p(1)}`;
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
