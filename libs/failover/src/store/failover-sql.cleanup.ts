import { sleep } from '@holdfast/core/kit';
import type { CleanupBatchOptions } from './failover-store';
import { cleanupBatchRows } from './failover-sql.dialect';
import type { FailoverRowValues } from './failover-store-query.resolver';
import { retried, type SqlStoreState } from './sql-store.state';

/** The cleanup lease row's FAILOVER_NAME (reserved) and FAILOVER_KEY. */
export const CLEANUP_LEASE_NAME = '$holdfast-cleanup';
const CLEANUP_LEASE_KEY = 'lease';

/** The store's INSERT of one row: true when inserted, false on a duplicate key. */
export type InsertRow = (row: FailoverRowValues) => Promise<boolean>;

/**
 * The expiry cleanup of the SQL store: deletes in bounded batches, and the cleanup lease that
 * lets one instance at a time run it.
 */
export class FailoverSqlCleanup {
  constructor(
    private readonly state: SqlStoreState,
    private readonly insert: InsertRow,
  ) {}

  /**
   * Deletes in statements of at most `batchSize` rows (autocommit: each its own short
   * transaction), yielding between them, until a statement removes nothing.
   */
  async cleanByExpiry(expiry: Date, options: CleanupBatchOptions = {}): Promise<number> {
    const { maintenanceSql: sql, queries, ctx } = this.state;
    const cutoff = sql.dialect.timestampParam(expiry);
    if (this.state.dialectUnknown) {
      const s = queries.cleanByExpiry(ctx, cutoff);
      const removed = await retried(() => sql.execute(s));
      options.onBatch?.(removed);
      return removed;
    }
    const batch = queries.cleanBatch(ctx, cutoff, options.batchSize ?? cleanupBatchRows(sql.dialect));
    let total = 0;
    for (;;) {
      const removed = await retried(() => sql.execute(batch));
      total += removed;
      options.onBatch?.(removed);
      // Until a statement finds nothing: a short batch may only mean that a caller re-stored
      // some of its rows meanwhile (PostgreSQL rechecks EXPIRE_ON), not that none is left.
      if (removed === 0) return total;
      if (options.pause) await sleep(options.pause);
      else await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /**
   * The cleanup lease: a row of this table (name CLEANUP_LEASE_NAME) whose EXPIRE_ON is the end
   * of the lease on the database clock (`now`). Taken by an UPDATE that only matches an expired
   * lease, or by the INSERT of a first one; two instances never both get it.
   */
  async claim(leaseMs: number, owner: string, now: number): Promise<boolean> {
    const { maintenanceSql: sql, queries, ctx } = this.state;
    const d = sql.dialect;
    const asOf = d.timestampParam(new Date(now));
    const expireOn = d.timestampParam(new Date(now + leaseMs));
    const payload = this.state.rows.payloadColumn.bind(JSON.stringify(owner), d);
    const name = CLEANUP_LEASE_NAME;
    const key = CLEANUP_LEASE_KEY;
    const s = queries.claimLease(ctx, { name, key, asOf, expireOn, payload, now: asOf });
    const claimed = await retried(() => sql.execute(s));
    if (claimed > 0) return true;
    return this.insert({ name, key, asOf, expireOn, payload, payloadClass: 'String' });
  }
}
