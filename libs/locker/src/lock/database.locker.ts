import { monotonicMillis, type SqlClient, statement } from '@holdfast/core/kit';
import { GaleraRowLockError } from '../errors';
import { prepareLockRow } from '../store/lock-row';
import { AbstractLocker } from './abstract.locker';
import type { HeldTransaction } from './held-transaction';
import { declareLockConnection, LockConnection } from './lock-connection';
import { idleTimeoutFor, safetyMargin, statementTimeoutFor } from './lock-timing';
import type { LockerContext } from './locker.interface';
import { RowLockTransaction } from './row-lock.transaction';
import { SqliteWriteLock } from './sqlite-write-lock';

/**
 * ActiveMQ's DefaultDatabaseLocker: the master keeps a transaction open that holds the lock
 * row with SELECT ... FOR UPDATE, on a connection of its own, for as long as it is master.
 * The lock lives exactly as long as that transaction: a master that crashes loses it as soon as
 * the server notices the closed socket, and one that vanishes silently (a partition, a hung
 * host) loses it when the server ends its transaction after `idleTimeout` of silence (see
 * LockQueryResolver.holdTimeouts), a little above the keep-alive period. Standbys poll with
 * SKIP LOCKED instead of parking a blocked connection, so shutdown never waits on a lock wait.
 *
 * The connection is reserved from a coordination lane of the lock's own (ConnectionBudget; of the
 * DataSource's pool with `coordinationPool: false`) by LockConnection: keep-alives never
 * queue behind the application's work, every wait is bounded, and a connection that held the
 * lock is destroyed on release or demotion rather than handed back to the pool.
 *
 * SQLite has no row locks: see SqliteWriteLock. Galera does not replicate row locks, so the
 * locker refuses to start on a Galera node (GaleraRowLockError; use the lease-database locker).
 */
export class DatabaseLocker extends AbstractLocker {
  private hold!: HeldTransaction;
  private lastTouch = 0;
  /** How long the server lets the lock transaction sit silent before ending it (0: never). */
  idleTimeout = 0;

  override async configure(context: LockerContext): Promise<void> {
    super.configure(context);
    const database = context.database();
    // Startup statements (and SQLite's file lock) on the application's pool: this locker's own
    // connection is `heldSql`, and it uses no lease lane.
    const sql = database.setupSql ?? database.sql;
    const { tablePrefix, lockTable } = context.options;
    // The one place the database locker differs by database: SQLite locks files, not rows.
    if (sql.dialect.singleConnection) {
      this.hold = new SqliteWriteLock({
        sql,
        tablePrefix,
        lockName: context.lock.name,
        holderId: context.holder.id,
        names: lockTable,
      });
      return;
    }
    await refuseGalera(sql, context.lock.name);
    const queries = await prepareLockRow(sql, context.options, context.lock.name);
    const keepAlive = context.lock.keepAlivePeriod;
    this.idleTimeout = keepAlive > 0 ? idleTimeoutFor(keepAlive) : 0;
    if (keepAlive === 0) {
      this.logger.warn(
        `Lock '${context.lock.name}': lockKeepAlivePeriod is 0, so the server cannot be asked to end a silent ` +
          `master's transaction: a master that vanishes without closing its connection keeps the lock until the ` +
          `server notices the dead connection (TCP keepalive, possibly hours). Set lockKeepAlivePeriod to bound it.`,
      );
    }
    // The lock's own connection: a coordination lane of its own, or one reserved of the application's pool.
    const held = database.heldSql?.() ?? database.sql;
    declareLockConnection(held, context.lock.name);
    const connection = new LockConnection(
      held,
      statementTimeoutFor(context.lock.acquireSleepInterval, keepAlive),
    );
    this.hold = new RowLockTransaction({
      connection,
      queries,
      lockName: context.lock.name,
      holderId: context.holder.id,
      idleTimeout: this.idleTimeout,
    });
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
        : this.context.lock.acquireSleepInterval;
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
    return this.hold?.held ? this.context.holder.id : undefined;
  }
}

/**
 * Throws GaleraRowLockError when `sql` is a Galera node (MariaDB Galera, Percona XtraDB Cluster):
 * global `wsrep_on` ON with a provider loaded. A single MySQL or MariaDB server has no such
 * variable, or has it OFF, or has no provider (`none`); other databases are not asked.
 */
async function refuseGalera(sql: SqlClient, lockName: string): Promise<void> {
  if (sql.dialect.name !== 'mysql' && sql.dialect.name !== 'mariadb') return;
  const rows = await sql.query<Record<string, unknown>>(
    statement("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('wsrep_on', 'wsrep_provider')"),
  );
  const value = (name: string) => {
    const row = rows.find((r) => String(r.Variable_name ?? r.VARIABLE_NAME).toLowerCase() === name);
    return row === undefined ? undefined : String(row.Value ?? row.VALUE);
  };
  const on = value('wsrep_on')?.toUpperCase();
  const provider = value('wsrep_provider') ?? '';
  if ((on !== 'ON' && on !== '1') || provider === '' || provider.toLowerCase() === 'none') return;
  const [size] = await sql.query<Record<string, unknown>>(
    statement("SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size'"),
  );
  const members = Number(size?.Value ?? size?.VALUE);
  throw new GaleraRowLockError(lockName, Number.isFinite(members) && size ? members : undefined);
}
