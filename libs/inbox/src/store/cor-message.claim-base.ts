import { type SqlClient, StatementBinder } from '@holdfast/core/kit';
import { CorMessageGroupedStatements } from './cor-message.groups';
import { pausedTypeMatch } from './cor-message.paused';
import type { MessageRow, Now } from './cor-message.rows';

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

/** A way to claim (see CorMessageClaim), and the pieces both ways share. */
export abstract class ClaimStatements extends CorMessageGroupedStatements {
  abstract claim(limit: number, now: Now, lease: ClaimLease, hold?: Hold): Promise<Claimed>;

  /** The lease end to write: the database clock plus the lease, or the node's own lease end. */
  protected leaseEnd(b: StatementBinder, now: Now, lease: ClaimLease): string {
    return typeof lease === 'number' ? this.nowPlus(b, now, lease) : this.t.at(b, lease.until);
  }

  /**
   * Due rows, and rows still under the lease end of one of this node's claims that got no answer
   * (each within its millisecond, as CorMessageCompletion tells a lease apart).
   */
  protected due(b: StatementBinder, now: Now, lease: ClaimLease): string {
    const orphans = typeof lease === 'number' ? [] : (lease.orphans ?? []);
    const orphaned = () =>
      orphans
        .map(
          (until) => ` OR (NEXT_RETRY >= ${this.t.at(b, until)} AND NEXT_RETRY < ${this.t.at(b, until + 1)})`,
        )
        .join('');
    return (
      this.statusCondition('due', () => this.now(b, now), orphans.length ? orphaned : undefined) +
      this.notPaused(b)
    );
  }

  /**
   * ` AND NOT (…)`: none of the paused types (see CorMessageTable.pausedTypes), or '' when none is
   * paused, so the claim of an inbox without pauses is the statement it always was.
   */
  private notPaused(b: StatementBinder): string {
    const match = pausedTypeMatch(b, this.on.pausedTypes);
    return match ? ` AND NOT ${match}` : '';
  }

  /**
   * MySQL/MariaDB: walk the delivery-order index. Left to itself the optimizer prefers a full
   * scan plus a sort at some table sizes, which is slow on a backlog (and would lock the whole
   * backlog if the read were a locking one).
   */
  protected orderIndexHint(): string {
    const priority = this.on.priority;
    if (priority) return priority.indexed ? this.d.forceIndex(priority.index) : '';
    return this.on.hasOrderIndex ? this.d.forceIndex(this.on.orderIndex) : '';
  }

  /**
   * The order a claim picks in: INSERTED, ID; with priorities, PRIORITY first (lower first), the
   * columns of COR_MESSAGE_PRIORITY_INDEX.
   */
  protected get pickOrder(): string {
    return this.on.priority ? 'PRIORITY, INSERTED, ID' : 'INSERTED, ID';
  }
}
