import { type SqlClient, StatementBinder, type Statement } from '@holdfast/core/kit';
import type { ClaimLease, Claimed, CorMessageClaim, CorMessageClaimTerms, Hold } from './cor-message.claim';
import { earlier, type CorMessageGroups } from './cor-message.groups';
import type { PausedTypeFilter } from './cor-message.paused';
import type { CorMessageShared } from './cor-message.shared';
import type { MessageRow, Now, RawRow } from './cor-message.rows';
import { indexWalkFilter, rowAddress, subqueryFence } from './inbox-sql.dialect';

/**
 * PostgreSQL and SQLite: a claim is one statement (see CorMessageClaim). PostgreSQL picks with
 * `FOR UPDATE SKIP LOCKED` and leases by primary key in one UPDATE … RETURNING (data-modifying
 * CTEs when grouped); SQLite's single writer holds the write lock for that statement only.
 */
export class CorMessageClaimOneStatement implements CorMessageClaim {
  constructor(
    private readonly on: CorMessageShared,
    private readonly groups: CorMessageGroups,
    private readonly terms: CorMessageClaimTerms,
  ) {}

  async claim(
    limit: number,
    now: Now,
    leaseOf: ClaimLease,
    hold?: Hold,
    paused: readonly PausedTypeFilter[] = [],
  ): Promise<Claimed> {
    if (this.on.groupTable !== undefined)
      return this.claimGroupedInOneStatement(limit, now, leaseOf, hold, paused);
    // Bound in the order the placeholders appear (SQLite numbers '?' by position).
    const b = new StatementBinder(this.on.d);
    const lease = this.terms.leaseEnd(b, now, leaseOf);
    // PostgreSQL finds the picked rows again by their address, not by a second walk of the
    // primary key's index for each key (measured on 20,000 rows claimed 500 at a time: the
    // statement's own time per row 15 → 13 µs).
    const key = rowAddress(this.on.d) ?? 'ID';
    const pick = this.on.d.limit(
      `SELECT ${key} FROM ${this.on.table} WHERE ${indexWalkFilter(this.on.d, this.terms.due(b, now, leaseOf, paused))} ORDER BY ${this.terms.pickOrder}`,
      limit,
    );
    const dbNow = `${this.on.claimClock(b, now)} AS db_now`;
    const read = { leaseKnown: typeof leaseOf !== 'number' };
    const update =
      `UPDATE ${this.on.table} SET NEXT_RETRY = ${lease} WHERE ${this.on.d.keyIn(key, pick + this.on.d.forUpdate(this.on.d.supportsSkipLocked))} ` +
      `RETURNING ${dbNow}, ${this.on.columns(true, read)}`;
    // With a writable CTE (PostgreSQL) the database hands the rows back in delivery order as it
    // sorts them (collation included), without the sort key itself (a timestamp the driver would
    // parse for every row); SQLite cannot wrap an UPDATE in a CTE (see run).
    const text = this.on.d.writableCte
      ? `WITH claimed AS (${update}, INSERTED AS ord_inserted) ` +
        `SELECT db_now, ${this.on.columnAliases(true, read)} FROM claimed ORDER BY ${this.on.priority ? 'priority, ' : ''}ord_inserted, id`
      : update;
    return this.run(b.statement(text), now, leaseOf, hold);
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
    hold: Hold | undefined,
    paused: readonly PausedTypeFilter[],
  ): Promise<Claimed> {
    const b = new StatementBinder(this.on.d);
    const read = { leaseKnown: typeof leaseOf !== 'number' };
    // SQLite's RETURNING sees the table by its name only (not an alias).
    const groupKey = (row: string) =>
      `(SELECT hf_k.GROUP_KEY FROM ${this.on.groupTable} hf_k WHERE hf_k.ID = ${row}.ID) AS group_key`;
    let text: string;
    if (this.on.d.writableCte) {
      // PostgreSQL: pick (SKIP LOCKED), keep and lease in one statement of data-modifying CTEs.
      const due = indexWalkFilter(this.on.d, this.terms.due(b, now, leaseOf, paused));
      const ready = this.groups.groupReady(b, now, 'hf_m', paused);
      const picked = this.on.d.limit(
        `SELECT hf_m.ID FROM ${this.on.table} hf_m WHERE ${due}${ready} ORDER BY ${this.terms.pickOrder}`,
        limit,
      );
      const kept =
        `SELECT p.ID FROM hf_picked p WHERE NOT EXISTS (SELECT 1 FROM ${this.on.groupTable} hf_g ` +
        `JOIN ${this.on.groupTable} hf_e ON hf_e.GROUP_KEY = hf_g.GROUP_KEY AND ${earlier('hf_e', 'hf_g')} ` +
        `JOIN ${this.on.table} hf_em ON hf_em.ID = hf_e.ID WHERE hf_g.ID = p.ID AND ${this.groups.holdsGroup(b, now)} ` +
        `AND hf_e.ID NOT IN (SELECT ID FROM hf_picked)${subqueryFence(this.on.d)})`;
      const lease = this.terms.leaseEnd(b, now, leaseOf);
      const dbNow = `${this.on.claimClock(b, now)} AS db_now`;
      text =
        `WITH hf_picked AS (${picked}${this.on.d.forUpdate(true)}), hf_kept AS (${kept}), ` +
        `claimed AS (UPDATE ${this.on.table} AS hf_u SET NEXT_RETRY = ${lease} WHERE ${this.on.d.keyIn('ID', 'SELECT ID FROM hf_kept')} ` +
        `RETURNING ${dbNow}, ${this.on.columns(true, read)}, ${groupKey('hf_u')}, INSERTED AS ord_inserted) ` +
        `SELECT db_now, ${this.on.columnAliases(true, read)}, group_key FROM claimed ORDER BY ord_inserted, id`;
    } else {
      // SQLite: one writer (leader mode), and the statement holds the write lock: nothing can
      // take a predecessor between the pick and the update.
      const lease = this.terms.leaseEnd(b, now, leaseOf);
      const due = this.terms.due(b, now, leaseOf, paused);
      const ready = this.groups.groupReady(b, now, 'hf_m', paused);
      const pick = this.on.d.limit(
        `SELECT hf_m.ID FROM ${this.on.table} hf_m WHERE ${due}${ready} ORDER BY ${this.terms.pickOrder}`,
        limit,
      );
      const dbNow = `${this.on.claimClock(b, now)} AS db_now`;
      text =
        `UPDATE ${this.on.table} SET NEXT_RETRY = ${lease} WHERE ID IN (${pick}) ` +
        `RETURNING ${dbNow}, ${this.on.columns(true, read)}, ${groupKey(this.on.table)}`;
    }
    return this.run(b.statement(text), now, leaseOf, hold);
  }

  /**
   * Runs a one-statement claim (in a transaction of its own when `hold` is given) and reads its
   * rows in delivery order.
   */
  async run(s: Statement, now: Now, leaseOf: ClaimLease, hold?: Hold): Promise<Claimed> {
    const run = async (sql: SqlClient) => {
      // Kept planned per connection on PostgreSQL: the claim's text is the same at every call but
      // those that also take back an unanswered claim's rows (a few texts more, capped per pool).
      const raw = await sql.query<RawRow & { db_now: unknown }>(s, { prepared: true });
      if (hold) await hold(sql);
      return raw;
    };
    const raw = hold ? await this.on.sql.transaction(run) : await run(this.on.sql);
    const rows = raw.map((r) => this.on.read(r));
    // The claim's own lease end, not read back (see ClaimColumns).
    if (typeof leaseOf !== 'number') for (const row of rows) row.nextRetry = leaseOf.until;
    // Not sorted by a writable CTE: SQLite's RETURNING follows no order; JavaScript sorts by code
    // point, as SQLite does.
    // Grouped claims keep acceptance order among their rows (a group's run in its order), also
    // with priorities, which decide only what is picked.
    if (!this.on.d.writableCte)
      rows.sort(this.on.priority && this.on.groupTable === undefined ? byPriorityOrder : byDeliveryOrder);
    return { rows, now: raw.length ? this.on.t.toMillis(raw[0].db_now) : (now ?? NaN) };
  }
}

/** PRIORITY (lower first), then delivery order: an ungrouped claim with priorities. */
function byPriorityOrder(a: MessageRow, b: MessageRow): number {
  return (a.priority ?? 0) - (b.priority ?? 0) || byDeliveryOrder(a, b);
}

/** INSERTED, then ID: the order every list and every delivery follows. */
function byDeliveryOrder(a: MessageRow, b: MessageRow): number {
  return a.inserted - b.inserted || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
