import { toNumber, type SqlClient, StatementBinder, type Statement } from '@holdfast/core/kit';
import type { CorMessageShared } from './cor-message.shared';
import { pausedTypeMatch, type PausedTypeFilter } from './cor-message.paused';
import type { Now } from './cor-message.rows';
import { keyedRows, keysInFrom, subqueryFence } from './inbox-sql.dialect';

/** `e` comes before `g` in delivery order (two aliases of the group table). */
export function earlier(e: string, g: string): string {
  // A row comparison: one range of the group index (GROUP_KEY, INSERTED, ID).
  return `(${e}.INSERTED, ${e}.ID) < (${g}.INSERTED, ${g}.ID)`;
}

/**
 * Strict order per group (`<prefix>HOLDFAST_INBOX_GROUP`): the conditions a grouped claim adds,
 * and the deletes that take a message's group row with it.
 */
export class CorMessageGroups {
  constructor(private readonly on: CorMessageShared) {}

  /**
   * ` AND …`: the message `m` (an alias of COR_MESSAGE) has no earlier message of its group that
   * waits for something else: leased by a node (possibly this one's other batch), waiting for a
   * retry, paused, or waiting for a handler. Earlier messages that are due do not stop it: they
   * are taken by the same claim, before it (see claimGroupedInOneStatement). Parked and expired
   * messages do not hold their group back, nor do messages without a group row.
   *
   * The dialect's subquery fence keeps the NOT EXISTS a subquery run per candidate row (stopping
   * at the first match, through the group index), instead of an anti-join over the whole group
   * table that PostgreSQL's planner otherwise chooses: 8 s for one claim on a backlog of 30,000
   * in 100 groups.
   *
   * `paused`: the types paused across the cluster (see CorMessageClaim.claim).
   */
  groupReady(b: StatementBinder, now: Now, m: string, paused: readonly PausedTypeFilter[]): string {
    // Bound in the order the placeholders appear (SQLite and MySQL number '?' by position).
    const n1 = this.on.now(b, now);
    const pausedMatch = pausedTypeMatch(b, paused, 'hf_em');
    const n2 = this.on.now(b, now);
    return (
      ` AND NOT EXISTS (SELECT 1 FROM ${this.on.groupTable} hf_g JOIN ${this.on.groupTable} hf_e ` +
      `ON hf_e.GROUP_KEY = hf_g.GROUP_KEY AND ${earlier('hf_e', 'hf_g')} ` +
      `JOIN ${this.on.table} hf_em ON hf_em.ID = hf_e.ID WHERE hf_g.ID = ${m}.ID ` +
      `AND ${this.waitsElsewhere(n1, m, pausedMatch)} AND hf_em.RETRIES < ${Math.trunc(this.on.maxRetries)} ` +
      `AND (hf_em.EXPIRATION IS NULL OR hf_em.EXPIRATION > ${n2})${subqueryFence(this.on.d)})`
    );
  }

  /**
   * The earlier group member `hf_em` holds `m` back: it waits for something else (NEXT_RETRY
   * ahead, or its type is paused: `paused`, see pausedTypeMatch); with priorities also when it is
   * due with a later priority than `m`'s. A message thus
   * never comes before an earlier one of its group in the claim's order (PRIORITY, INSERTED, ID),
   * so the claim's LIMIT never takes a later member without the earlier ones (which would keep
   * none of them, claim after claim): within a group acceptance order rules, and a message with a
   * better priority waits behind the earlier ones (as if it had theirs).
   */
  private waitsElsewhere(now: string, m: string, paused: string): string {
    const alsoPaused = paused ? ` OR ${paused}` : '';
    if (!this.on.priority)
      return alsoPaused ? `(hf_em.NEXT_RETRY > ${now}${alsoPaused})` : `hf_em.NEXT_RETRY > ${now}`;
    return `(hf_em.NEXT_RETRY > ${now} OR hf_em.PRIORITY > ${m}.PRIORITY${alsoPaused})`;
  }

  /**
   * True for a message `hf_em` that holds back the later messages of its group: still in the
   * table, not parked, not expired.
   */
  holdsGroup(b: StatementBinder, now: Now): string {
    const max = Math.trunc(this.on.maxRetries);
    return (
      // Parked: exhausted whatever NEXT_RETRY says (see CorMessageShared.statusCondition).
      `hf_em.RETRIES < ${max} ` +
      `AND (hf_em.EXPIRATION IS NULL OR hf_em.EXPIRATION > ${this.on.now(b, now)})`
    );
  }

  /**
   * MySQL/MariaDB, inside the claim's transaction once `ids` are locked: their groups, and which
   * of them have an earlier group member that still holds the group and is not among `ids` (taken
   * or being claimed by another node since the candidates were read): those are left out.
   */
  async groupsOfTaken(
    tx: SqlClient,
    ids: readonly string[],
    now: Now,
  ): Promise<{ groups: Map<string, string>; blocked: Set<string> }> {
    const s = this.groupsOfTakenStatement(ids, now);
    const rows = await tx.query<{ id: string; group_key: string; blocked: unknown }>(s);
    const groups = new Map<string, string>();
    const blocked = new Set<string>();
    for (const r of rows) {
      groups.set(r.id, r.group_key);
      if (toNumber(r.blocked)) blocked.add(r.id);
    }
    return { groups, blocked };
  }

  groupsOfTakenStatement(ids: readonly string[], now: Now): Statement {
    const b = new StatementBinder(this.on.d);
    const inner =
      `SELECT 1 FROM ${this.on.groupTable} hf_e JOIN ${this.on.table} hf_em ON hf_em.ID = hf_e.ID ` +
      `WHERE hf_e.GROUP_KEY = hf_g.GROUP_KEY AND ${earlier('hf_e', 'hf_g')} ` +
      `AND ${this.holdsGroup(b, now)} AND hf_e.ID NOT IN (${b.list(ids)})`;
    return b.statement(
      `SELECT hf_g.ID AS id, hf_g.GROUP_KEY AS group_key, CASE WHEN EXISTS (${inner}) THEN 1 ELSE 0 END AS blocked ` +
        `FROM ${this.on.groupTable} hf_g WHERE hf_g.ID IN (${b.list(ids)})`,
    );
  }

  /**
   * Runs a delete of messages; with groups, in one transaction with the delete of their group
   * rows, so a crash between the two leaves no group row behind.
   */
  async deleting(ids: readonly string[], work: (client: SqlClient) => Promise<number>): Promise<number> {
    if (this.on.groupTable === undefined) return work(this.on.sql);
    return this.on.sql.transaction(async (tx) => {
      const deleted = await work(tx);
      await this.deleteGroupsOf(tx, ids);
      return deleted;
    });
  }

  /**
   * Removes the group rows of these messages once the messages are gone (a message still in the
   * table, e.g. whose claim another node took meanwhile, keeps its group).
   */
  async deleteGroupsOf(client: SqlClient, ids: readonly string[]): Promise<void> {
    if (this.on.groupTable === undefined || !ids.length) return;
    const s = this.deleteGroupsOfStatement(ids);
    await client.execute(s);
  }

  /** The group rows of `ids` whose message is gone (see deleteGroupsOf; with a group table). */
  deleteGroupsOfStatement(ids: readonly string[]): Statement {
    const b = new StatementBinder(this.on.d);
    // Where the keys are a join (MySQL/MariaDB), the orphans are found by an anti-join.
    if (keysInFrom(this.on.d)) {
      const target = keyedRows(this.on.d, b, this.on.groupTable!, 'ID', ids);
      return b.statement(
        `DELETE ${target.deleteFrom} LEFT JOIN ${this.on.table} hf_m ON hf_m.ID = m.ID WHERE hf_m.ID IS NULL`,
      );
    }
    return b.statement(
      `DELETE FROM ${this.on.groupTable} AS hf_g WHERE hf_g.ID IN (${b.list(ids)}) ` +
        `AND NOT EXISTS (SELECT 1 FROM ${this.on.table} hf_m WHERE hf_m.ID = hf_g.ID)`,
    );
  }
}
