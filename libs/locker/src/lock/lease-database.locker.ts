import {
  CoordinationPool,
  monotonicMillis,
  sqlRetryCounter,
  toNumber,
  withTransientRetry,
  type SqlClient,
} from '@holdfast/core/kit';
import type { LockQueryResolver } from '../store/lock-query.resolver';
import { LockerConfigurationError } from '../errors';
import { FAILOVER_GRACE_HOLDER } from '../store/lease-failover-grace';
import { prepareLockRow } from '../store/lock-row';
import { AbstractLocker } from './abstract.locker';
import { declareLockConnection, LockConnection } from './lock-connection';
import { statementTimeoutFor } from './lock-timing';
import type { LockerContext } from './locker.interface';

/** `holdfast.locker.sql.retries`: lease statements retried after a deadlock or lock wait timeout. */
const countRetry = sqlRetryCounter('locker');

/**
 * ActiveMQ's LeaseDatabaseLocker: no long transaction. The lease is an expiry time in the lock
 * row, set by the database clock; a standby takes it only once it has expired, the master
 * extends it only while the row still names it. The lease lasts one lockAcquireSleepInterval.
 * On PostgreSQL and MySQL/MariaDB every statement runs on Holdfast's lease lane (a connection of
 * its own that Simba and the other lease statements share, ConnectionBudget), so renewals never
 * wait behind the application's work; each wait is bounded by the lane's client, and a connection
 * that hung is destroyed instead of reused. Without coordination lanes (`coordinationPool: false`)
 * it reserves a connection of the application's pool (LockConnection), as before.
 *
 * On PostgreSQL, after a promotion that may have lost commits (an asynchronous standby), no
 * instance takes the lease before the one the old primary may have granted has ended: see
 * store/lease-failover-grace.ts.
 */
export class LeaseDatabaseLocker extends AbstractLocker {
  private sql!: SqlClient;
  private connection?: LockConnection;
  private queries!: LockQueryResolver;
  private validUntilMono = 0;
  /** Database clock minus this server's clock, measured at configure time. */
  clockDiffMillis = 0;

  /**
   * Local deadlines stop a little before the lease ends in the database, so this instance has
   * demoted before any standby can see the lease expired, whatever the scheduling jitter.
   */
  private get safetyMargin(): number {
    return Math.min(2_000, Math.floor(this.leaseMillis * 0.25));
  }

  private get leaseMillis(): number {
    return this.context.lock.acquireSleepInterval;
  }

  override async configure(context: LockerContext): Promise<void> {
    super.configure(context);
    const database = context.database();
    const sql = database.sql;
    const setup = database.setupSql ?? sql;
    this.sql = sql;
    if (!sql.dialect.singleConnection && !CoordinationPool.of(sql.dataSource)) {
      declareLockConnection(sql, context.lock.name);
      this.connection = new LockConnection(
        sql,
        statementTimeoutFor(context.lock.acquireSleepInterval, context.lock.keepAlivePeriod),
      );
    }
    if (context.holder.id === FAILOVER_GRACE_HOLDER) {
      throw new LockerConfigurationError(
        `Option 'locker.leaseHolderId' = ${JSON.stringify(context.holder.id)}: the name is reserved for a ` +
          `lock row in its grace after a PostgreSQL failover.`,
      );
    }
    this.queries = await prepareLockRow(setup, context.options, context.lock.name, { failoverGrace: true });
    const maxDiff = context.options.maxAllowableDiffFromDBTime;
    if (maxDiff > 0) {
      const before = Date.now();
      const dbNow = await setup.nowMillis();
      this.clockDiffMillis = dbNow - Math.round((before + Date.now()) / 2);
      if (Math.abs(this.clockDiffMillis) > maxDiff) {
        this.logger.warn(
          `This server's clock differs from the database clock by ${this.clockDiffMillis} ms ` +
            `(more than maxAllowableDiffFromDBTime ${maxDiff} ms). Leases use the database clock only, ` +
            `so locking is unaffected, but logged times from this server will disagree with the database.`,
        );
      }
    }
  }

  /**
   * Takes a free or expired lease, or, when this instance's holder id is its own generated one
   * (unique per instance), a lease that still names this instance: a renewal or an acquisition
   * whose answer never came (the server paused, then ran it) can leave the lease in our name
   * after we stepped down, and nobody else may take it until it runs out. A configured
   * `leaseHolderId` may be shared by mistake, so such a lease is left to run out.
   */
  protected async tryAcquire(): Promise<boolean> {
    const sent = monotonicMillis();
    const ownToo = !this.context.holder.configured;
    const holder = this.context.holder.id;
    const acquire = this.queries.acquireLease(
      { id: this.context.lock.name, holder, leaseMillis: this.leaseMillis },
      ownToo,
    );
    const changed = await this.run('Acquiring the lease', (sql) => sql.execute(acquire));
    if (changed !== 1) return false;
    this.validUntilMono = sent + this.leaseMillis - this.safetyMargin;
    return true;
  }

  async keepAlive(): Promise<boolean> {
    const sent = monotonicMillis();
    const renew = this.queries.renewLease({
      id: this.context.lock.name,
      holder: this.context.holder.id,
      leaseMillis: this.leaseMillis,
    });
    const changed = await this.run('Renewing the lease', (sql) => sql.execute(renew));
    if (changed !== 1) return false;
    // The database set expiry = its now + lease, and its now is not earlier than our `sent`.
    this.validUntilMono = sent + this.leaseMillis - this.safetyMargin;
    return true;
  }

  validUntil(): number {
    return this.validUntilMono;
  }

  async stop(): Promise<void> {
    this.validUntilMono = 0;
    if (!this.sql) return; // never configured (startup failed before)
    const release = this.queries.releaseLease(this.context.lock.name, this.context.holder.id);
    try {
      await this.run('Releasing the lease', (sql) => sql.execute(release));
    } finally {
      // A stopped instance keeps no pooled connection checked out; the next start takes a new one.
      // Retired rather than destroyed: a read already queued behind the release still gets its answer.
      this.connection?.retire();
    }
  }

  async dispose(): Promise<void> {
    this.connection?.destroy();
  }

  /**
   * On the lease lane, the reserved lock connection, or SQLite's one connection. Each statement is one
   * conditional autocommit UPDATE or read, so a deadlock victim is simply sent again (within the bound).
   */
  private run<T>(what: string, work: (sql: SqlClient) => Promise<T>): Promise<T> {
    const retried = (sql: SqlClient) =>
      withTransientRetry(() => work(sql), { operation: what, onRetry: countRetry });
    return this.connection ? this.connection.run(what, retried) : retried(this.sql);
  }

  override async holder(): Promise<string | undefined> {
    const read = this.queries.readRow(this.context.lock.name);
    const [row] = await this.run('Reading the lease', (sql) =>
      sql.query<{ broker_name: unknown; time: unknown; now: unknown }>(read),
    );
    if (!row || row.broker_name == null || row.time == null) return undefined;
    if (row.broker_name === FAILOVER_GRACE_HOLDER) return undefined; // nobody: the row is in its grace
    return toNumber(row.time) >= toNumber(row.now) ? String(row.broker_name) : undefined;
  }
}
