import type { CorMessageTable } from './cor-message.base';
import { ClaimByKeys } from './cor-message.claim-by-keys';
import type { ClaimLease, ClaimStatements, Claimed, Hold } from './cor-message.claim-base';
import { ClaimInOneStatement } from './cor-message.claim-one-statement';
import { FairClaimByKeys, FairClaimInOneStatement } from './cor-message.claim-fair';
import type { CorMessageGroups } from './cor-message.groups';
import type { Now } from './cor-message.rows';

export type { ClaimLease } from './cor-message.claim-base';

/**
 * Claiming due messages in delivery order, grouped or not, under a lease in NEXT_RETRY; the way
 * to claim is chosen once, by what the dialect's locking reads lock.
 */
export class CorMessageClaim {
  private readonly way: ClaimStatements;
  /** With fair share on (CorMessageTable.fairShare, set at startup): see cor-message.claim-fair.ts. */
  private readonly fairWay: ClaimStatements;

  constructor(
    private readonly on: CorMessageTable,
    groups: CorMessageGroups,
  ) {
    const byKeys = on.sql.dialect.locksScannedRows;
    this.way = byKeys ? new ClaimByKeys(on, groups) : new ClaimInOneStatement(on, groups);
    this.fairWay = byKeys ? new FairClaimByKeys(on, groups) : new FairClaimInOneStatement(on, groups);
  }

  /**
   * Claims up to `limit` due, unexpired messages in delivery order (INSERTED, ID) and leases
   * them until `now + leaseMs` by moving NEXT_RETRY, so no other node selects them until the
   * lease ends. The claim locks only the rows it takes, whatever the table size:
   *
   * - PostgreSQL: one statement (`UPDATE … WHERE ID = ANY(ARRAY(SELECT … ORDER BY INSERTED, ID
   *   LIMIT n FOR UPDATE SKIP LOCKED)) RETURNING`): rows are locked as the ordered index scan
   *   hands them out, the update finds them by primary key (not by a scan of the table, which
   *   the planner chooses for `IN (…)` when the statistics predate a bulk of new rows), and
   *   nothing stays open across a round trip.
   * - MySQL/MariaDB: InnoDB locks every row a locking read looks at, so the locking read never
   *   scans: a non-locking read of candidate keys walks the delivery-order index (forced), then
   *   a locking read joined with those keys (`FOR UPDATE SKIP LOCKED`) takes exactly those rows
   *   by primary key, as many as are still missing; rows that another node holds are skipped
   *   and the next candidates are tried. READ COMMITTED, so rows refused by the WHERE are not
   *   kept locked.
   * - SQLite: one `UPDATE … RETURNING` statement; the write lock lasts that statement only.
   *
   * `hold` (tests) runs inside the claim's transaction after the rows are locked.
   */
  claim(limit: number, now: Now, lease: ClaimLease, hold?: Hold): Promise<Claimed> {
    return (this.on.fairShare ? this.fairWay : this.way).claim(limit, now, lease, hold);
  }
}
