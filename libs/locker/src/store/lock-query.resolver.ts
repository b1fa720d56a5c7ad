import { statement, StatementBinder, tableName, type SqlDialect, type Statement } from '@holdfast/core/kit';
import { DEFAULT_LOCK_TABLE_NAMES, type LockTableNames } from './holdfast-lock.table';
import { FAILOVER_GRACE_HOLDER, TIMELINE_MARKER } from './lease-failover-grace';
import { idleTransactionTimeouts } from './lock-sql.dialect';

/** One lease on a lock row: the lock, who takes it, and for how long (ms, database clock). */
export interface LeaseClaim {
  readonly id: string;
  readonly holder: string;
  readonly leaseMillis: number;
}

/** The database locker's acquire attempt as one message: see `LockQueryResolver.acquireRowLock`. */
export interface RowLockAcquire {
  /** `script`: statements in one simple-protocol query (PostgreSQL); `compound`: one compound statement (MariaDB). */
  readonly kind: 'script' | 'compound';
  readonly sql: string;
  readonly params: readonly unknown[];
}

/**
 * A PostgreSQL string literal: quotes doubled; with a backslash, the escape-string form (E'...',
 * backslashes doubled), which reads the same whatever `standard_conforming_strings` says.
 */
function postgresLiteral(value: string): string {
  const quoted = value.replace(/'/g, "''");
  return value.includes('\\') ? `E'${quoted.replace(/\\/g, '\\\\')}'` : `'${quoted}'`;
}

/**
 * All SQL on `<prefix>HOLDFAST_LOCK` (or the table and columns named by `lockTableName` and
 * `lockColumns`), built from the dialect's pieces. Lease times are computed by the database
 * (`dialect.nowMillis`), never from the application server's clock. The names are validated
 * identifiers; every value is a bound parameter. Each method returns the statement with its
 * values; the lockers run them.
 */
export class LockQueryResolver {
  readonly table: string;
  private readonly ID: string;
  private readonly TIME: string;
  private readonly BROKER_NAME: string;
  /**
   * The lease statements keep the grace after a lossy failover (see lease-failover-grace.ts):
   * set by prepareLockRow for the lease locker on Holdfast's own table on PostgreSQL.
   */
  failoverGrace = false;

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

  private binder(): StatementBinder {
    return new StatementBinder(this.dialect);
  }

  /**
   * Creates the row of lock `id` if it is missing; never changes an existing row.
   * Run it only after rowExists() said no: an insert that meets a row another transaction holds
   * FOR UPDATE waits for that transaction, which with the database locker lasts as long as the master.
   */
  ensureRow(id: string): Statement {
    return statement(this.dialect.upsert({ table: this.table, columns: [this.ID], keys: [this.ID] }), [id]);
  }

  /** A plain read of the row of lock `id` that never waits on row locks. */
  rowExists(id: string): Statement {
    const b = this.binder();
    return b.statement(`SELECT ${this.ID} AS id FROM ${this.table} WHERE ${this.ID} = ${b.bind(id)}`);
  }

  /**
   * Takes an expired or free lease for `holder` for `leaseMillis`. With `ownToo`, also a lease
   * that still names `holder`: see LeaseDatabaseLocker.tryAcquire. With the failover grace, a row
   * in grace (holder FAILOVER_GRACE_HOLDER, TIME the promotion's detection or a later expiry) is
   * free only once `leaseMillis` more have passed, and nothing is taken by the statement that
   * detects a promotion.
   */
  acquireLease(lease: LeaseClaim, ownToo = false): Statement {
    const b = this.binder();
    const now = this.dialect.nowMillis;
    const guard = this.graceGuard(b);
    const expired = guard
      ? `(${this.TIME} < ${now} AND (${this.BROKER_NAME} IS NULL OR ${this.BROKER_NAME} <> ${b.bind(FAILOVER_GRACE_HOLDER)})) ` +
        `OR ${this.TIME} < ${now} - ${b.bind(lease.leaseMillis)}`
      : `${this.TIME} < ${now}`;
    return b.statement(
      `${guard?.with ?? ''}UPDATE ${this.table} SET ${this.BROKER_NAME} = ${b.bind(lease.holder)}, ${this.TIME} = ${now} + ${b.bind(lease.leaseMillis)} ` +
        `WHERE ${this.ID} = ${b.bind(lease.id)} AND (${this.TIME} IS NULL OR ${expired}${ownToo ? ` OR ${this.BROKER_NAME} = ${b.bind(lease.holder)}` : ''})` +
        (guard?.unmoved ?? ''),
    );
  }

  /** Extends the lease by `leaseMillis` only where `holder` still holds it. */
  renewLease(lease: LeaseClaim): Statement {
    const b = this.binder();
    const guard = this.graceGuard(b);
    return b.statement(
      `${guard?.with ?? ''}UPDATE ${this.table} SET ${this.TIME} = ${this.dialect.nowMillis} + ${b.bind(lease.leaseMillis)} ` +
        `WHERE ${this.ID} = ${b.bind(lease.id)} AND ${this.BROKER_NAME} = ${b.bind(lease.holder)}${guard?.unmoved ?? ''}`,
    );
  }

  /**
   * @ScheduledLock after a run: keeps the lock until lockAtLeastFor after the start (TIME was set
   * to start + lockAtMostFor), or frees it now (TIME NULL) when that has passed. Only the run that
   * took it. `leaseMillis` is lockAtMostFor - lockAtLeastFor.
   */
  shortenLease(lease: LeaseClaim): Statement {
    const b = this.binder();
    const now = this.dialect.nowMillis;
    // Bound twice: positional placeholders cannot repeat a value.
    return b.statement(
      `UPDATE ${this.table} SET ${this.TIME} = CASE WHEN ${this.TIME} - ${b.bind(lease.leaseMillis)} > ${now} THEN ${this.TIME} - ${b.bind(lease.leaseMillis)} ` +
        `ELSE NULL END WHERE ${this.ID} = ${b.bind(lease.id)} AND ${this.BROKER_NAME} = ${b.bind(lease.holder)}`,
    );
  }

  /** Gives the lease of `holder` up so a standby can take it at once. */
  releaseLease(id: string, holder: string): Statement {
    const b = this.binder();
    const guard = this.graceGuard(b);
    return b.statement(
      `${guard?.with ?? ''}UPDATE ${this.table} SET ${this.TIME} = NULL, ${this.BROKER_NAME} = NULL ` +
        `WHERE ${this.ID} = ${b.bind(id)} AND ${this.BROKER_NAME} = ${b.bind(holder)}${guard?.unmoved ?? ''}`,
    );
  }

  /**
   * Creates the timeline marker row with the server's timeline if the table has none (PostgreSQL;
   * a new table starts without a grace). Its holder is the marker's name too, so the status
   * listings, which leave out that holder, never show it.
   */
  ensureTimelineMarker(): Statement | undefined {
    const timeline = this.dialect.timeline;
    if (timeline === undefined) return undefined;
    const b = this.binder();
    const marker = b.bind(TIMELINE_MARKER);
    return b.statement(
      `INSERT INTO ${this.table} (${this.ID}, ${this.TIME}, ${this.BROKER_NAME}) ` +
        `SELECT ${marker}, ${timeline}, ${b.bind(TIMELINE_MARKER)} ON CONFLICT (${this.ID}) DO NOTHING`,
    );
  }

  /**
   * The failover grace's detection, put in front of every lease write (one statement, so one
   * round trip as before): `moved` moves the marker to the server's timeline when it names
   * another one (a promotion since the table's last write), and `graced` then puts every other
   * row into grace (holder FAILOVER_GRACE_HOLDER, TIME not before now), skipping rows a
   * transaction holds (the database locker's live masters: their rows are not leases). `unmoved`
   * is the lease statement's extra condition: the statement that detects a promotion changes
   * nothing else. Undefined when the grace is off.
   *
   * Why this is safe against a concurrent lease statement: that statement's `moved` waits for
   * the marker row, which the detecting statement holds until it commits, before its own UPDATE
   * looks at its lease row (the condition on `moved` is evaluated first); PostgreSQL then
   * re-checks that row's WHERE against the version the detection left (in grace), not its older
   * snapshot.
   */
  private graceGuard(b: StatementBinder): { with: string; unmoved: string } | undefined {
    const timeline = this.dialect.timeline;
    if (!this.failoverGrace || timeline === undefined) return undefined;
    const now = this.dialect.nowMillis;
    return {
      with:
        `WITH moved AS (UPDATE ${this.table} SET ${this.TIME} = ${timeline} ` +
        `WHERE ${this.ID} = ${b.bind(TIMELINE_MARKER)} AND ${this.TIME} IS DISTINCT FROM ${timeline} RETURNING ${this.ID}), ` +
        `graced AS (UPDATE ${this.table} SET ${this.BROKER_NAME} = ${b.bind(FAILOVER_GRACE_HOLDER)}, ` +
        `${this.TIME} = GREATEST(${this.TIME}, ${now}) WHERE ${this.ID} IN (SELECT ${this.ID} FROM ${this.table} ` +
        `WHERE ${this.ID} <> ${b.bind(TIMELINE_MARKER)} AND EXISTS (SELECT 1 FROM moved) FOR UPDATE SKIP LOCKED) RETURNING ${this.ID}) `,
      unmoved: ` AND NOT EXISTS (SELECT 1 FROM moved)`,
    };
  }

  /** The row of lock `id` with the database clock next to it. */
  readRow(id: string): Statement {
    const b = this.binder();
    return b.statement(
      `SELECT ${this.BROKER_NAME} AS broker_name, ${this.TIME} AS time, ${this.dialect.nowMillis} AS now ` +
        `FROM ${this.table} WHERE ${this.ID} = ${b.bind(id)}`,
    );
  }

  /**
   * Locks the row of lock `id` for the rest of the transaction, or returns no row at once when
   * another transaction holds it (SKIP LOCKED: a standby polls instead of parking a connection).
   */
  lockRow(id: string): Statement {
    const b = this.binder();
    return b.statement(
      `SELECT ${this.ID} AS id FROM ${this.table} WHERE ${this.ID} = ${b.bind(id)}${this.dialect.forUpdate(this.dialect.supportsSkipLocked)}`,
    );
  }

  /** Writes `holder` and the database time into the locked row of lock `id`. */
  claimRow(id: string, holder: string): Statement {
    const b = this.binder();
    return b.statement(
      `UPDATE ${this.table} SET ${this.BROKER_NAME} = ${b.bind(holder)}, ${this.TIME} = ${this.dialect.nowMillis} WHERE ${this.ID} = ${b.bind(id)}`,
    );
  }

  /** Keep-alive of the database locker: touches the locked row of lock `id` in the open transaction. */
  touchRow(id: string): Statement {
    const b = this.binder();
    return b.statement(
      `UPDATE ${this.table} SET ${this.TIME} = ${this.dialect.nowMillis} WHERE ${this.ID} = ${b.bind(id)}`,
    );
  }

  /**
   * The database locker's acquire attempt in one round trip, where the database can take it in
   * one message (undefined elsewhere: `lockRow`, `holdTimeouts` and `claimRow` one at a time, in a
   * transaction opened by the driver). Either way the row is taken only when no other transaction
   * holds it (SKIP LOCKED: never a wait on a row lock), and the transaction stays open only when it
   * was taken:
   * - PostgreSQL (`script`): BEGIN, the transaction's idle bound (transaction-local) and an UPDATE
   *   of the row locked by a SKIP LOCKED subquery, as one simple-protocol query, which has no
   *   parameters: the two values are quoted literals. The UPDATE's row count says whether the row
   *   was taken; when not, the caller rolls the empty transaction back.
   * - MariaDB (`compound`): one compound statement that opens the transaction, counts the row
   *   locked FOR UPDATE SKIP LOCKED, then either sets the session's idle bounds and claims the row,
   *   or rolls back; its one result row (`held`) says which.
   */
  acquireRowLock(id: string, holder: string, idleMillis: number): RowLockAcquire | undefined {
    const timeouts = idleMillis > 0 ? idleTransactionTimeouts(this.dialect, idleMillis) : [];
    const now = this.dialect.nowMillis;
    const skipLocked = this.dialect.forUpdate(true);
    if (this.dialect.name === 'postgres' && this.dialect.supportsSkipLocked) {
      // A NUL cannot be quoted (it would end the query text): such values take the bound path.
      if (id.includes('\0') || holder.includes('\0')) return undefined;
      const claim =
        `UPDATE ${this.table} SET ${this.BROKER_NAME} = ${postgresLiteral(holder)}, ${this.TIME} = ${now} ` +
        `WHERE ${this.ID} = (SELECT ${this.ID} FROM ${this.table} WHERE ${this.ID} = ${postgresLiteral(id)}${skipLocked})`;
      return { kind: 'script', sql: ['BEGIN', ...timeouts, claim].join('; '), params: [] };
    }
    if (this.dialect.name === 'mariadb') {
      const b = this.binder();
      const held = 'hf_lock_held';
      const sql =
        `BEGIN NOT ATOMIC DECLARE ${held} INT DEFAULT 0; START TRANSACTION; ` +
        `SELECT COUNT(*) INTO ${held} FROM ${this.table} WHERE ${this.ID} = ${b.bind(id)}${skipLocked}; ` +
        `IF ${held} = 1 THEN ${timeouts.map((t) => `${t}; `).join('')}` +
        `UPDATE ${this.table} SET ${this.BROKER_NAME} = ${b.bind(holder)}, ${this.TIME} = ${now} WHERE ${this.ID} = ${b.bind(id)}; ` +
        `ELSE ROLLBACK; END IF; SELECT ${held} AS held; END`;
      const { params } = b.statement(sql);
      return { kind: 'compound', sql, params };
    }
    return undefined;
  }

  /**
   * Statements that make the server end the lock's transaction (and free the row) once its
   * client has been silent inside it for `idleMillis`: a vanished master (partition, hung host)
   * cannot keep the lock for hours. `idleTransactionTimeouts`: PostgreSQL's is
   * transaction-local, so it works behind PgBouncer; MySQL/MariaDB have only whole seconds and
   * session scope, which is why the lock connection is destroyed, never returned to the pool.
   * Empty where the dialect has no such setting.
   */
  holdTimeouts(idleMillis: number): Statement[] {
    return idleTransactionTimeouts(this.dialect, idleMillis).map((sql) => statement(sql));
  }
}
