import { StatementBinder, type SqlClient, type Statement } from '@holdfast/core/kit';
import type { CorMessageGroups } from './cor-message.groups';
import type { CorMessageShared } from './cor-message.shared';
import type { Lease, Now } from './cor-message.rows';
import { keysInFrom } from './inbox-sql.dialect';

/** A failed attempt to record (see recordFailure). */
export interface FailedAttempt {
  id: string;
  /** RETRIES as claimed: the compare-and-set token. */
  seenRetries: number;
  error: string;
  /** undefined: parked. */
  delayMs: number | undefined;
  now: Now;
}

/** The rows of `leases`, once each (a row may be given with two lease ends it may hold). */
function idsOf(leases: readonly Lease[]): string[] {
  return [...new Set(leases.map((l) => l.id))];
}

/** What follows a claim: heartbeats, deletes of delivered messages, failures, releases. */
export class CorMessageCompletion {
  constructor(
    private readonly on: CorMessageShared,
    private readonly groups: CorMessageGroups,
  ) {}

  /** The client these statements run on. */
  get sql(): SqlClient {
    return this.on.sql;
  }

  /**
   * Rows still claimed by this node: NEXT_RETRY is still the lease end this node wrote (cut to
   * the millisecond), within the same millisecond. Nothing else writes that value: another node
   * claims a row only after its lease has ended and writes its own later lease end; a failure,
   * a release, a pause or an admin's retry write other times. The statement's target already
   * holds these ids only; with one lease end (the usual case) this is a plain range on
   * NEXT_RETRY (an `OR` of id lists made PostgreSQL's delete of a batch markedly slower), else
   * `(…) OR (…)`, one term per lease end.
   */
  private owned(b: StatementBinder, leases: readonly Lease[]): string {
    const byEnd = new Map<number, string[]>();
    for (const { id, until } of leases) {
      const ids = byEnd.get(until);
      if (ids) ids.push(id);
      else byEnd.set(until, [id]);
    }
    const range = (until: number) =>
      `NEXT_RETRY >= ${this.on.t.at(b, until)} AND NEXT_RETRY < ${this.on.t.at(b, until + 1)}`;
    if (byEnd.size === 1) return `(${range([...byEnd.keys()][0])})`;
    const some = (ids: string[]) =>
      this.on.keyedTextIsFixed ? `ID = ANY(${this.on.idArray(b, ids)})` : `ID IN (${b.list(ids)})`;
    const terms = [...byEnd].map(([until, ids]) => `(${some(ids)} AND ${range(until)})`);
    return `(${terms.join(' OR ')})`;
  }

  /**
   * A heartbeat: moves the lease end of every row still claimed by this node to `until` (epoch
   * ms), in one statement, and returns the ids that are still this node's (those it extended).
   * A row may be given twice, with each lease end it may hold (after a heartbeat whose answer
   * was lost); it matches either.
   */
  async extendLeases(leases: readonly Lease[], until: number): Promise<Set<string>> {
    if (!leases.length) return new Set();
    const ids = idsOf(leases);
    const s = this.extendLeasesStatement(leases, until);
    const changed = await this.on.sql.execute(s, { prepared: this.on.keyedTextIsFixed });
    if (changed >= ids.length) return new Set(ids);
    // Some were not ours any more (or a driver counts unchanged rows apart): ask which are.
    const q = this.ownedIdsStatement(ids, until);
    const rows = await this.on.sql.query<{ id: string }>(q);
    return new Set(rows.map((row) => row.id));
  }

  extendLeasesStatement(leases: readonly Lease[], until: number): Statement {
    const ids = idsOf(leases);
    // Bound in the order the placeholders appear: the keys of the join first on MySQL/MariaDB,
    // after the SET elsewhere (ID IN …).
    const b = new StatementBinder(this.on.d);
    const early = keysInFrom(this.on.d) ? this.on.keyed(b, ids) : undefined;
    const set = this.on.t.at(b, until);
    const { from, where } = early ?? this.on.keyed(b, ids);
    return b.statement(`UPDATE ${from} SET NEXT_RETRY = ${set} WHERE ${where}${this.owned(b, leases)}`);
  }

  /** Those of `ids` whose lease ends at `until` (this node's, after a heartbeat). */
  ownedIdsStatement(ids: readonly string[], until: number): Statement {
    const b = new StatementBinder(this.on.d);
    const target = this.on.keyed(b, ids);
    const owned = this.owned(
      b,
      ids.map((id) => ({ id, until })),
    );
    return b.statement(`SELECT ID AS id FROM ${target.from} WHERE ${target.where}${owned}`);
  }

  /** Delivered: the rows this node still holds are gone (a claim lost meanwhile is left alone). */
  async deleteOwned(leases: readonly Lease[]): Promise<number> {
    if (!leases.length) return 0;
    const ids = idsOf(leases);
    const s = this.deleteOwnedStatement(leases, ids);
    // PostgreSQL: the text depends only on how many lease ends the rows may hold (see keyed).
    const prepared = this.on.keyedTextIsFixed;
    return this.groups.deleting(ids, (client) => client.execute(s, { prepared }));
  }

  deleteOwnedStatement(leases: readonly Lease[], ids = idsOf(leases)): Statement {
    const b = new StatementBinder(this.on.d);
    const target = this.on.keyed(b, ids);
    return b.statement(`DELETE ${target.deleteFrom} WHERE ${target.where}${this.owned(b, leases)}`);
  }

  /** Delivered: the rows are gone. */
  async deleteDelivered(ids: readonly string[]): Promise<number> {
    if (!ids.length) return 0;
    const s = this.deleteDeliveredStatement(ids);
    return this.groups.deleting(ids, (client) => client.execute(s));
  }

  deleteDeliveredStatement(ids: readonly string[]): Statement {
    const b = new StatementBinder(this.on.d);
    const target = this.on.keyed(b, ids);
    return b.statement(`DELETE ${target.deleteFrom} WHERE ${target.where}1 = 1`);
  }

  /**
   * A failed attempt. Applies only if nobody else recorded an attempt meanwhile (RETRIES is
   * unchanged: a counter, never a timestamp, as the compare-and-set token) and no admin paused
   * it. `delayMs` undefined parks the message: NEXT_RETRY NULL with RETRIES at maxRetries.
   */
  async recordFailure(attempt: FailedAttempt): Promise<boolean> {
    const s = this.recordFailureStatement(attempt);
    return (await this.on.sql.execute(s)) > 0;
  }

  recordFailureStatement({ id, seenRetries, error, delayMs, now }: FailedAttempt): Statement {
    const b = new StatementBinder(this.on.d);
    const retries = b.bind(seenRetries + 1);
    const next = delayMs === undefined ? 'NULL' : this.on.nowPlus(b, now, Math.round(delayMs));
    const err = b.bind(error);
    const where = `ID = ${b.bind(id)} AND RETRIES = ${b.bind(seenRetries)} AND (NEXT_RETRY IS NULL OR NEXT_RETRY < ${this.on.farFuture()})`;
    return b.statement(
      `UPDATE ${this.on.table} SET RETRIES = ${retries}, NEXT_RETRY = ${next}, ERROR = ${err} WHERE ${where}`,
    );
  }

  /**
   * Gives leased messages back without counting an attempt: due at `now + delayMs` (0: at once).
   * `error` (if given) is stored so an admin sees why (e.g. no handler).
   */
  async release(ids: readonly string[], delayMs: number, now: Now, error?: string): Promise<number> {
    if (!ids.length) return 0;
    const s = this.releaseStatement(ids, delayMs, now, error);
    return this.on.sql.execute(s);
  }

  releaseStatement(ids: readonly string[], delayMs: number, now: Now, error?: string): Statement {
    // Bound in the order the placeholders appear: the keys come first on MySQL/MariaDB (a join),
    // last elsewhere (ID IN …).
    const b = new StatementBinder(this.on.d);
    const target = keysInFrom(this.on.d) ? this.on.keyed(b, ids) : undefined;
    const next = this.on.nowPlus(b, now, Math.max(0, Math.round(delayMs)));
    const err = error === undefined ? '' : `, ERROR = ${b.bind(error)}`;
    const { from, where } = target ?? this.on.keyed(b, ids);
    return b.statement(
      `UPDATE ${from} SET NEXT_RETRY = ${next}${err} WHERE ${where}(NEXT_RETRY IS NULL OR NEXT_RETRY < ${this.on.farFuture()})`,
    );
  }
}
