import { type SqlClient, StatementBinder, type Statement } from '@holdfast/core/kit';
import type { ClaimLease, Claimed, CorMessageClaim, CorMessageClaimTerms, Hold } from './cor-message.claim';
import type { CorMessageGroups } from './cor-message.groups';
import type { PausedTypeFilter } from './cor-message.paused';
import type { CorMessageShared } from './cor-message.shared';
import type { Now, RawRow } from './cor-message.rows';

/** A due key read before the locking read (MySQL/MariaDB). */
export interface Candidate {
  inserted_ms: unknown;
  id: string;
  /** With priorities only. */
  priority?: unknown;
}

/** One read of candidates: up to `limit` due keys, after `after` when given. */
export interface CandidateRead {
  limit: number;
  now: Now;
  lease: ClaimLease;
  paused: readonly PausedTypeFilter[];
  after?: Candidate;
}

/** A row of the locking read: the row's columns and the database clock. */
type LockedRow = RawRow & { db_now: unknown };

/** Where a claim's candidates come from: the delivery-order index by default (fair share: FairCandidates). */
export interface CandidateSource {
  candidates(tx: SqlClient, read: CandidateRead): Promise<Candidate[]>;
}

/**
 * MySQL/MariaDB (InnoDB locks every row a locking read looks at): candidates by a plain read of
 * the delivery-order index, then a locking read of exactly those keys, then the lease (see
 * CorMessageClaim.claim).
 */
export class CorMessageClaimByKeys implements CorMessageClaim {
  constructor(
    private readonly on: CorMessageShared,
    private readonly groups: CorMessageGroups,
    private readonly terms: CorMessageClaimTerms,
    /** Fair share's candidates (see cor-message.claim-fair.ts); the delivery-order index's without. */
    private readonly source?: CandidateSource,
  ) {}

  async claim(
    limit: number,
    now: Now,
    leaseOf: ClaimLease,
    hold?: Hold,
    paused: readonly PausedTypeFilter[] = [],
  ): Promise<Claimed> {
    // READ COMMITTED: at REPEATABLE READ InnoDB keeps the lock on every row a locking read looked
    // at, also on those its WHERE then refused: a claim would hold rows another node had just
    // leased, and that node's delete of them would wait for this claim to commit (measured: a
    // healthy worker at 0.53x beside a slow one). At READ COMMITTED those locks go at once, so a
    // claim holds exactly the rows it takes. Core's transaction: the server ends it if this
    // client goes silent inside it for the client's idleInTransactionTimeout.
    // The first candidates are read before it: a plain read needs no transaction, an empty inbox
    // then costs this one round trip, and a batch three: this read, the locking read (with the
    // transaction's opening on MariaDB) and the lease UPDATE (with its COMMIT on MariaDB).
    const read: CandidateRead = { limit, now, lease: leaseOf, paused };
    const first = await this.candidates(this.on.sql, read);
    if (!first.length) return { rows: [], now: now ?? NaN };
    return this.on.sql.transaction(
      async (tx) => {
        const { taken, order } = await this.lockRounds(tx, read, first);
        const groups = await this.leaveBlockedGroups(tx, taken, now);
        if (!taken.length) return { rows: [], now: now ?? NaN };
        this.sortForDelivery(taken, order, groups);
        return this.lease(tx, taken, read, groups, hold);
      },
      { isolation: 'read committed' },
    );
  }

  /**
   * A few rounds of candidates: enough to fill a batch past rows other nodes hold. Each round
   * locks all its candidates in one read and keeps the first it got, in delivery order, up to the
   * claim's size; after the first round it reads twice as many candidates as are still missing
   * (at least 64). Asking the locking read only for as many as were missing made a node beside
   * another one (whose claim held some of the same candidates) lock the rest of a round a few
   * keys at a time, down to one key a round trip: 1,613 locking reads for 60,000 messages
   * delivered by two nodes (MariaDB's performance_schema), where a round now costs two
   * statements. Rows locked beyond the claim's size are left unleased and free again at COMMIT,
   * moments later; another node's SKIP LOCKED passes them meanwhile. `order`: every candidate's
   * id, in the order the database sorted them.
   */
  private async lockRounds(
    tx: SqlClient,
    read: CandidateRead,
    first: Candidate[],
  ): Promise<{ taken: LockedRow[]; order: string[] }> {
    const { limit, now, lease: leaseOf, paused } = read;
    const taken: LockedRow[] = [];
    let after: Candidate | undefined;
    const order: string[] = [];
    for (let round = 0; round < 4 && taken.length < limit; round++) {
      const ask = round === 0 ? limit : Math.min(limit, Math.max(2 * (limit - taken.length), 64));
      const candidates =
        round === 0 ? first : await this.candidates(tx, { limit: ask, now, lease: leaseOf, paused, after });
      if (!candidates.length) break;
      after = candidates[candidates.length - 1];
      order.push(...candidates.map((c) => c.id));
      const lock = this.lockDueStatement(
        candidates.map((c) => c.id),
        now,
        leaseOf,
        paused,
      );
      const locked = await tx.query<LockedRow>(lock);
      if (locked.length <= limit - taken.length) taken.push(...locked);
      else {
        const got = new Map(locked.map((r) => [r.id, r]));
        for (const c of candidates) {
          const row = got.get(c.id);
          if (row) taken.push(row);
          if (taken.length === limit) break;
        }
      }
      if (candidates.length < ask) break;
    }
    return { taken, order };
  }

  /**
   * With a group table: the group of each row taken, and the rows whose group is not ready left
   * out of `taken` (locked until this transaction ends, but never leased).
   */
  private async leaveBlockedGroups(
    tx: SqlClient,
    taken: LockedRow[],
    now: Now,
  ): Promise<Map<string, string> | undefined> {
    if (this.on.groupTable === undefined || !taken.length) return undefined;
    const found = await this.groups.groupsOfTaken(
      tx,
      taken.map((r) => r.id),
      now,
    );
    if (found.blocked.size) taken.splice(0, taken.length, ...taken.filter((r) => !found.blocked.has(r.id)));
    return found.groups;
  }

  /** Delivery order is the candidates' order, as the database sorted them (the join returns the rows in no particular order). */
  private sortForDelivery(taken: LockedRow[], order: readonly string[], groups?: Map<string, string>): void {
    const position = new Map(order.map((id, i) => [id, i]));
    taken.sort((x, y) => position.get(x.id)! - position.get(y.id)!);
    // Grouped with priorities: picked by priority, run in acceptance order (a group's run in its order).
    if (groups && this.on.priority) taken.sort((x, y) => byAcceptance(x, y, (v) => this.on.t.toMillis(v)));
  }

  /**
   * Leases the rows taken, the transaction's last statement unless a test `hold`s it open. The
   * lease end is a bound value (the database clock read above, plus the lease), so the node knows
   * exactly what it wrote: that value is its claim (see extendLeases).
   */
  private async lease(
    tx: SqlClient,
    taken: readonly LockedRow[],
    { now, lease: leaseOf }: CandidateRead,
    groups: Map<string, string> | undefined,
    hold?: Hold,
  ): Promise<Claimed> {
    const dbNow = this.on.t.toMillis(taken[0].db_now);
    const until = typeof leaseOf === 'number' ? (now ?? dbNow) + leaseOf : leaseOf.until;
    const lease = this.leaseKeysStatement(
      taken.map((r) => r.id),
      until,
    );
    await tx.execute(lease, { commit: !hold });
    if (hold) await hold(tx);
    const rows = taken.map((r) => {
      const row = this.on.read(r);
      row.nextRetry = until;
      const group = groups?.get(r.id);
      if (group !== undefined) row.group = group;
      return row;
    });
    return { rows, now: dbNow };
  }

  /** Due keys in delivery order, after `after` when given: a plain read, no lock. */
  private async candidates(tx: SqlClient, read: CandidateRead): Promise<Candidate[]> {
    if (this.source) return this.source.candidates(tx, read);
    return tx.query<Candidate>(this.candidatesStatement(read));
  }

  /** MySQL/MariaDB: those of `keys` still due, locked (FOR UPDATE), with the database clock. */
  private lockDueStatement(
    keys: readonly string[],
    now: Now,
    leaseOf: ClaimLease,
    paused: readonly PausedTypeFilter[],
  ): Statement {
    const b = new StatementBinder(this.on.d);
    const dbNow = `${this.on.claimClock(b, now)} AS db_now`;
    const target = this.on.keyed(b, keys);
    const due = this.terms.due(b, now, leaseOf, paused);
    // NEXT_RETRY is the lease end this claim writes (bound: see claim).
    return b.statement(
      `SELECT ${dbNow}, ${this.on.columns(true, { leaseKnown: true })} FROM ${target.from} WHERE ${target.where}${due}` +
        this.on.d.forUpdate(true),
    );
  }

  /** MySQL/MariaDB: the lease of the rows taken, until `until` (epoch ms, bound). */
  private leaseKeysStatement(ids: readonly string[], until: number): Statement {
    const b = new StatementBinder(this.on.d);
    const target = this.on.keyed(b, ids);
    return b.statement(
      `UPDATE ${target.from} SET NEXT_RETRY = ${this.on.t.at(b, until)} WHERE ${target.where}1 = 1`,
    );
  }

  private candidatesStatement({ limit, now, lease: leaseOf, paused, after }: CandidateRead): Statement {
    const b = new StatementBinder(this.on.d);
    let where = this.terms.due(b, now, leaseOf, paused);
    if (after) {
      // Bound in the order the placeholders appear (MySQL numbers '?' by position). With
      // priorities the keyset is (PRIORITY, INSERTED, ID): a later priority, or the same one later.
      const p = Number(after.priority);
      const head = this.on.priority ? `(PRIORITY > ${b.bind(p)} OR (PRIORITY = ${b.bind(p)} AND ` : '';
      const at = this.on.t.at(b, this.on.t.toMillis(after.inserted_ms));
      const again = this.on.t.at(b, this.on.t.toMillis(after.inserted_ms));
      where += ` AND ${head}(INSERTED > ${at} OR (INSERTED = ${again} AND ID > ${b.bind(after.id)}))${head ? '))' : ''}`;
    }
    if (this.on.groupTable !== undefined) where += this.groups.groupReady(b, now, 'hf_m', paused);
    return b.statement(
      this.on.d.limit(
        `SELECT ID AS id, ${this.on.t.read('INSERTED')} AS inserted_ms${this.on.priority ? ', PRIORITY AS priority' : ''} FROM ${this.on.table} ${this.on.groupTable !== undefined ? 'hf_m ' : ''}${this.terms.orderIndexHint()}` +
          `WHERE ${where} ORDER BY ${this.terms.pickOrder}`,
        limit,
      ),
    );
  }
}

/** INSERTED, then ID (grouped claims with priorities: see claim). */
function byAcceptance(x: RawRow, y: RawRow, millis: (value: unknown) => number): number {
  const a = millis(x.inserted_ms);
  const b = millis(y.inserted_ms);
  return a - b || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
}
