import { type SqlClient, StatementBinder } from '@holdfast/core/kit';
import { CorMessageGroupedStatements, earlier } from './cor-message.groups';
import type { MessageRow, Now, RawRow } from './cor-message.rows';

/** Runs inside a claim's transaction once its rows are locked (tests). */
type Hold = (tx: SqlClient) => Promise<void>;

/** The claimed rows, and the database clock the claim read (`now` when a test clock is set). */
type Claimed = { rows: MessageRow[]; now: number };

/**
 * How a claim leases its rows: for `leaseMs` from the database clock (a number), or until a lease
 * end the node chose itself (epoch ms). A node that chooses it knows what a claim wrote even when
 * the claim's answer never came (a timeout, a connection lost after the statement was sent):
 * such a claim may still have leased rows, to nobody, until its lease ends. Its lease end goes in
 * `orphans` at the node's next claims, which take those rows back as if they were due.
 */
export type ClaimLease = number | { until: number; orphans?: readonly number[] };

/** Claiming due messages in delivery order, grouped or not, under a lease in NEXT_RETRY. */
export class CorMessageClaim extends CorMessageGroupedStatements {
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
  async claim(limit: number, now: Now, lease: ClaimLease, hold?: Hold): Promise<Claimed> {
    if (this.d.locksScannedRows) return this.claimByKeys(limit, now, lease, hold);
    return this.claimInOneStatement(limit, now, lease, hold);
  }

  private async claimInOneStatement(
    limit: number,
    now: Now,
    leaseOf: ClaimLease,
    hold?: Hold,
  ): Promise<Claimed> {
    if (this.groupTable !== undefined) return this.claimGroupedInOneStatement(limit, now, leaseOf, hold);
    // Bound in the order the placeholders appear (SQLite numbers '?' by position).
    const b = new StatementBinder(this.d);
    const lease = this.leaseEnd(b, now, leaseOf);
    const pick = this.d.limit(
      `SELECT ID FROM ${this.table} WHERE ${this.d.indexWalkFilter(this.due(b, now, leaseOf))} ORDER BY INSERTED, ID`,
      limit,
    );
    const dbNow = `${this.t.read(this.now(b, now))} AS db_now`;
    const update =
      `UPDATE ${this.table} SET NEXT_RETRY = ${lease} WHERE ${this.d.keyIn('ID', pick + this.d.forUpdate(this.d.supportsSkipLocked))} ` +
      `RETURNING ${dbNow}, ${this.columns(true)}`;
    // With a writable CTE (PostgreSQL) the database hands the rows back in delivery order as it
    // sorts them (collation included), without the sort key itself (a timestamp the driver would
    // parse for every row); SQLite cannot wrap an UPDATE in a CTE (see runClaim).
    const text = this.d.writableCte
      ? `WITH claimed AS (${update}, INSERTED AS ord_inserted) ` +
        `SELECT db_now, ${this.columnAliases(true)} FROM claimed ORDER BY ord_inserted, id`
      : update;
    return this.runClaim(text, b, now, hold);
  }

  /**
   * Grouped claim on PostgreSQL and SQLite. Picks due messages whose group is ready (see
   * groupReady) in delivery order, then keeps only those whose earlier group members that still
   * hold the group were all picked by this same statement: with SKIP LOCKED, a message whose
   * predecessor another node is claiming right now is left out, so a group's messages are only
   * ever held by one node, as a run from the group's head.
   */
  private async claimGroupedInOneStatement(
    limit: number,
    now: Now,
    leaseOf: ClaimLease,
    hold?: Hold,
  ): Promise<Claimed> {
    const b = new StatementBinder(this.d);
    // SQLite's RETURNING sees the table by its name only (not an alias).
    const groupKey = (row: string) =>
      `(SELECT hf_k.GROUP_KEY FROM ${this.groupTable} hf_k WHERE hf_k.ID = ${row}.ID) AS group_key`;
    let text: string;
    if (this.d.writableCte) {
      // PostgreSQL: pick (SKIP LOCKED), keep and lease in one statement of data-modifying CTEs.
      const due = this.d.indexWalkFilter(this.due(b, now, leaseOf));
      const ready = this.groups.groupReady(b, now, 'hf_m');
      const picked = this.d.limit(
        `SELECT hf_m.ID FROM ${this.table} hf_m WHERE ${due}${ready} ORDER BY INSERTED, ID`,
        limit,
      );
      const kept =
        `SELECT p.ID FROM hf_picked p WHERE NOT EXISTS (SELECT 1 FROM ${this.groupTable} hf_g ` +
        `JOIN ${this.groupTable} hf_e ON hf_e.GROUP_KEY = hf_g.GROUP_KEY AND ${earlier('hf_e', 'hf_g')} ` +
        `JOIN ${this.table} hf_em ON hf_em.ID = hf_e.ID WHERE hf_g.ID = p.ID AND ${this.groups.holdsGroup(b, now)} ` +
        `AND hf_e.ID NOT IN (SELECT ID FROM hf_picked)${this.d.subqueryFence})`;
      const lease = this.leaseEnd(b, now, leaseOf);
      const dbNow = `${this.t.read(this.now(b, now))} AS db_now`;
      text =
        `WITH hf_picked AS (${picked}${this.d.forUpdate(true)}), hf_kept AS (${kept}), ` +
        `claimed AS (UPDATE ${this.table} AS hf_u SET NEXT_RETRY = ${lease} WHERE ${this.d.keyIn('ID', 'SELECT ID FROM hf_kept')} ` +
        `RETURNING ${dbNow}, ${this.columns(true)}, ${groupKey('hf_u')}, INSERTED AS ord_inserted) ` +
        `SELECT db_now, ${this.columnAliases(true)}, group_key FROM claimed ORDER BY ord_inserted, id`;
    } else {
      // SQLite: one writer (leader mode), and the statement holds the write lock: nothing can
      // take a predecessor between the pick and the update.
      const lease = this.leaseEnd(b, now, leaseOf);
      const due = this.due(b, now, leaseOf);
      const ready = this.groups.groupReady(b, now, 'hf_m');
      const pick = this.d.limit(
        `SELECT hf_m.ID FROM ${this.table} hf_m WHERE ${due}${ready} ORDER BY INSERTED, ID`,
        limit,
      );
      const dbNow = `${this.t.read(this.now(b, now))} AS db_now`;
      text =
        `UPDATE ${this.table} SET NEXT_RETRY = ${lease} WHERE ID IN (${pick}) ` +
        `RETURNING ${dbNow}, ${this.columns(true)}, ${groupKey(this.table)}`;
    }
    return this.runClaim(text, b, now, hold);
  }

  /**
   * Runs a one-statement claim (in a transaction of its own when `hold` is given) and reads its
   * rows in delivery order.
   */
  private async runClaim(text: string, b: StatementBinder, now: Now, hold?: Hold): Promise<Claimed> {
    const run = async (sql: SqlClient) => {
      // Kept planned per connection on PostgreSQL: the claim's text is the same at every call but
      // those that also take back an unanswered claim's rows (a few texts more, capped per pool).
      const raw = await sql.query<RawRow & { db_now: unknown }>(text, b.params, { prepared: true });
      if (hold) await hold(sql);
      return raw;
    };
    const raw = hold ? await this.sql.transaction(run) : await run(this.sql);
    const rows = raw.map((r) => this.read(r));
    // Not sorted by a writable CTE: SQLite's RETURNING follows no order; JavaScript sorts by code
    // point, as SQLite does.
    if (!this.d.writableCte) rows.sort(byDeliveryOrder);
    return { rows, now: raw.length ? this.t.toMillis(raw[0].db_now) : (now ?? NaN) };
  }

  private async claimByKeys(limit: number, now: Now, leaseOf: ClaimLease, hold?: Hold): Promise<Claimed> {
    // READ COMMITTED: at REPEATABLE READ InnoDB keeps the lock on every row a locking read looked
    // at, also on those its WHERE then refused: a claim would hold rows another node had just
    // leased, and that node's delete of them would wait for this claim to commit (measured: a
    // healthy worker at 0.53x beside a slow one). At READ COMMITTED those locks go at once, so a
    // claim holds exactly the rows it takes. Core's transaction: the server ends it if this
    // client goes silent inside it for the client's idleInTransactionTimeout.
    // The first candidates are read before it: a plain read needs no transaction, an empty inbox
    // then costs this one round trip, and a batch three: this read, the locking read (with the
    // transaction's opening on MariaDB) and the lease UPDATE (with its COMMIT on MariaDB).
    const first = await this.candidates(this.sql, limit, now, leaseOf);
    if (!first.length) return { rows: [], now: now ?? NaN };
    return this.sql.transaction(
      async (tx) => {
        const taken: (RawRow & { db_now: unknown })[] = [];
        let after: { inserted_ms: unknown; id: string } | undefined;
        const order: string[] = [];
        // A few rounds of candidates: enough to fill a batch past rows other nodes hold.
        for (let round = 0; round < 4 && taken.length < limit; round++) {
          const candidates = round === 0 ? first : await this.candidates(tx, limit, now, leaseOf, after);
          if (!candidates.length) break;
          after = candidates[candidates.length - 1];
          order.push(...candidates.map((c) => c.id));
          for (let i = 0; i < candidates.length && taken.length < limit;) {
            const keys = candidates.slice(i, i + (limit - taken.length)).map((c) => c.id);
            i += keys.length;
            const b = new StatementBinder(this.d);
            const dbNow = `${this.t.read(this.now(b, now))} AS db_now`;
            const target = this.keyed(b, keys);
            const due = this.due(b, now, leaseOf);
            taken.push(
              ...(await tx.query<RawRow & { db_now: unknown }>(
                `SELECT ${dbNow}, ${this.columns(true)} FROM ${target.from} WHERE ${target.where}${due}` +
                  this.d.forUpdate(true),
                b.params,
              )),
            );
          }
          if (candidates.length < limit) break;
        }
        let groups: Map<string, string> | undefined;
        if (this.groupTable !== undefined && taken.length) {
          const found = await this.groups.groupsOfTaken(
            tx,
            taken.map((r) => r.id),
            now,
          );
          groups = found.groups;
          // Left out: locked until this transaction ends, but never leased.
          if (found.blocked.size)
            taken.splice(0, taken.length, ...taken.filter((r) => !found.blocked.has(r.id)));
        }
        if (!taken.length) return { rows: [], now: now ?? NaN };
        // Delivery order is the candidates' order, as the database sorted them.
        const position = new Map(order.map((id, i) => [id, i]));
        taken.sort((x, y) => position.get(x.id)! - position.get(y.id)!);
        // (the join returns the rows in no particular order)
        const u = new StatementBinder(this.d);
        const target = this.keyed(
          u,
          taken.map((r) => r.id),
        );
        // The lease end as a bound value (the database clock read above, plus the lease), so the
        // node knows exactly what it wrote: that value is its claim (see extendLeases).
        const dbNow = this.t.toMillis(taken[0].db_now);
        const until = typeof leaseOf === 'number' ? (now ?? dbNow) + leaseOf : leaseOf.until;
        await tx.execute(
          `UPDATE ${target.from} SET NEXT_RETRY = ${this.t.at(u, until)} WHERE ${target.where}1 = 1`,
          u.params,
          // The transaction's last statement, unless a test holds it open.
          { commit: !hold },
        );
        if (hold) await hold(tx);
        const rows = taken.map((r) => {
          const group = groups?.get(r.id);
          return { ...this.read(r), nextRetry: until, ...(group !== undefined ? { group } : {}) };
        });
        return { rows, now: dbNow };
      },
      { isolation: 'read committed' },
    );
  }

  /** Due keys in delivery order, after `after` when given: a plain read, no lock. */
  private async candidates(
    tx: SqlClient,
    limit: number,
    now: Now,
    leaseOf: ClaimLease,
    after?: { inserted_ms: unknown; id: string },
  ): Promise<{ inserted_ms: unknown; id: string }[]> {
    const b = new StatementBinder(this.d);
    let where = this.due(b, now, leaseOf);
    if (after) {
      const at = this.t.at(b, this.t.toMillis(after.inserted_ms));
      const again = this.t.at(b, this.t.toMillis(after.inserted_ms));
      where += ` AND (INSERTED > ${at} OR (INSERTED = ${again} AND ID > ${b.bind(after.id)}))`;
    }
    if (this.groupTable !== undefined) where += this.groups.groupReady(b, now, 'hf_m');
    return tx.query<{ inserted_ms: unknown; id: string }>(
      this.d.limit(
        `SELECT ID AS id, ${this.t.read('INSERTED')} AS inserted_ms FROM ${this.table} ${this.groupTable !== undefined ? 'hf_m ' : ''}${this.orderIndexHint()}` +
          `WHERE ${where} ORDER BY INSERTED, ID`,
        limit,
      ),
      b.params,
    );
  }

  /** The lease end to write: the database clock plus the lease, or the node's own lease end. */
  private leaseEnd(b: StatementBinder, now: Now, lease: ClaimLease): string {
    return typeof lease === 'number' ? this.nowPlus(b, now, lease) : this.t.at(b, lease.until);
  }

  /**
   * Due rows, and rows still under the lease end of one of this node's claims that got no answer
   * (each within its millisecond, as CorMessageCompletion tells a lease apart).
   */
  private due(b: StatementBinder, now: Now, lease: ClaimLease): string {
    const orphans = typeof lease === 'number' ? [] : (lease.orphans ?? []);
    const orphaned = () =>
      orphans
        .map(
          (until) => ` OR (NEXT_RETRY >= ${this.t.at(b, until)} AND NEXT_RETRY < ${this.t.at(b, until + 1)})`,
        )
        .join('');
    return this.statusCondition('due', () => this.now(b, now), orphans.length ? orphaned : undefined);
  }

  /**
   * MySQL/MariaDB: walk the delivery-order index. Left to itself the optimizer prefers a full
   * scan plus a sort at some table sizes, which is slow on a backlog (and would lock the whole
   * backlog if the read were a locking one).
   */
  private orderIndexHint(): string {
    return this.on.hasOrderIndex ? this.d.forceIndex(this.on.orderIndex) : '';
  }
}

/** INSERTED, then ID: the order every list and every delivery follows. */
function byDeliveryOrder(a: MessageRow, b: MessageRow): number {
  return a.inserted - b.inserted || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
