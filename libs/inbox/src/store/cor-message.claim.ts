import type { SqlClient, StatementBinder } from '@holdfast/core/kit';
import type { CorMessageShared } from './cor-message.shared';
import { pausedTypeMatch, type PausedTypeFilter } from './cor-message.paused';
import type { MessageRow, Now } from './cor-message.rows';
import { forceIndex } from './inbox-sql.dialect';

/** Runs inside a claim's transaction once its rows are locked (tests). */
export type Hold = (tx: SqlClient) => Promise<void>;

/** The claimed rows, and the database clock the claim read (`now` when a test clock is set). */
export type Claimed = { rows: MessageRow[]; now: number };

/**
 * How a claim leases its rows: for `leaseMs` from the database clock (a number), or until a lease
 * end the node chose itself (epoch ms). A node that chooses it knows what a claim wrote even when
 * the claim's answer never came (a timeout, a connection lost after the statement was sent):
 * such a claim may still have leased rows, to nobody, until its lease ends. Its lease end goes in
 * `orphans` at the node's next claims, which take those rows back as if they were due.
 */
export type ClaimLease = number | { until: number; orphans?: readonly number[] };

/**
 * Claiming due messages in delivery order, grouped or not, under a lease in NEXT_RETRY. The way
 * to claim is chosen once, by what the dialect's locking reads lock (CorMessageStore builds it):
 *
 * - PostgreSQL and SQLite: CorMessageClaimOneStatement (cor-message.claim-one-statement.ts).
 * - MySQL/MariaDB: CorMessageClaimByKeys (cor-message.claim-by-keys.ts).
 *
 * Both build their conditions from CorMessageClaimTerms (below).
 */
export interface CorMessageClaim {
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
   * `hold` (tests) runs inside the claim's transaction after the rows are locked. `paused`: the
   * types paused across the cluster as the delivery loop last read them (see
   * InboxPauseStatements.snapshot): the claim leaves their messages where they are; none, no
   * condition at all in the claim.
   */
  claim(
    limit: number,
    now: Now,
    lease: ClaimLease,
    hold?: Hold,
    paused?: readonly PausedTypeFilter[],
  ): Promise<Claimed>;
}

/** The pieces both ways to claim build from. */
export class CorMessageClaimTerms {
  constructor(private readonly on: CorMessageShared) {}

  /** The lease end to write: the database clock plus the lease, or the node's own lease end. */
  leaseEnd(b: StatementBinder, now: Now, lease: ClaimLease): string {
    return typeof lease === 'number' ? this.on.nowPlus(b, now, lease) : this.on.t.at(b, lease.until);
  }

  /**
   * Due rows, and rows still under the lease end of one of this node's claims that got no answer
   * (each within its millisecond, as CorMessageCompletion tells a lease apart), of none of the
   * `paused` types.
   */
  due(b: StatementBinder, now: Now, lease: ClaimLease, paused: readonly PausedTypeFilter[]): string {
    const orphans = typeof lease === 'number' ? [] : (lease.orphans ?? []);
    const orphaned = () =>
      orphans
        .map(
          (until) =>
            ` OR (NEXT_RETRY >= ${this.on.t.at(b, until)} AND NEXT_RETRY < ${this.on.t.at(b, until + 1)})`,
        )
        .join('');
    return (
      this.on.statusCondition('due', () => this.on.now(b, now), orphans.length ? orphaned : undefined) +
      this.notPaused(b, paused)
    );
  }

  /**
   * ` AND NOT (…)`: none of the paused types, or '' when none is paused, so the claim of an inbox
   * without pauses is the statement it always was.
   */
  private notPaused(b: StatementBinder, paused: readonly PausedTypeFilter[]): string {
    const match = pausedTypeMatch(b, paused);
    return match ? ` AND NOT ${match}` : '';
  }

  /**
   * MySQL/MariaDB: walk the delivery-order index. Left to itself the optimizer prefers a full
   * scan plus a sort at some table sizes, which is slow on a backlog (and would lock the whole
   * backlog if the read were a locking one).
   */
  orderIndexHint(): string {
    const priority = this.on.priority;
    if (priority) return priority.indexed ? forceIndex(this.on.d, priority.index) : '';
    return this.on.hasOrderIndex ? forceIndex(this.on.d, this.on.orderIndex) : '';
  }

  /**
   * The order a claim picks in: INSERTED, ID; with priorities, PRIORITY first (lower first), the
   * columns of COR_MESSAGE_PRIORITY_INDEX.
   */
  get pickOrder(): string {
    return this.on.priority ? 'PRIORITY, INSERTED, ID' : 'INSERTED, ID';
  }
}
