import { StatementBinder, statement, type Statement } from '@holdfast/core/kit';
import type { CorMessageGroups } from './cor-message.groups';
import type { CorMessageShared } from './cor-message.shared';
import type { Now } from './cor-message.rows';

/** The expiry cleanup: expired messages, and group rows whose message is gone. */
export class CorMessageCleanup {
  constructor(
    private readonly on: CorMessageShared,
    private readonly groups: CorMessageGroups,
  ) {}

  /** Up to `limit` ids of expired messages (through the EXPIRATION index). */
  async expiredIds(limit: number, now: Now): Promise<string[]> {
    const s = this.expiredIdsStatement(limit, now);
    const rows = await this.on.sql.query<{ id: string }>(s);
    return rows.map((r) => r.id);
  }

  expiredIdsStatement(limit: number, now: Now): Statement {
    const b = new StatementBinder(this.on.d);
    const n = this.on.now(b, now);
    return b.statement(
      this.on.d.limit(
        `SELECT ID AS id FROM ${this.on.table} WHERE EXPIRATION IS NOT NULL AND EXPIRATION <= ${n}`,
        limit,
      ),
    );
  }

  async deleteExpired(ids: readonly string[], now: Now): Promise<number> {
    if (!ids.length) return 0;
    const s = this.deleteExpiredStatement(ids, now);
    return this.groups.deleting(ids, (client) => client.execute(s));
  }

  /** Those of `ids` that are still expired (one may have been retried by an admin meanwhile). */
  deleteExpiredStatement(ids: readonly string[], now: Now): Statement {
    const b = new StatementBinder(this.on.d);
    const target = this.on.keyed(b, ids);
    const expired = `EXPIRATION IS NOT NULL AND EXPIRATION <= ${this.on.now(b, now)}`;
    return b.statement(`DELETE ${target.deleteFrom} WHERE ${target.where}${expired}`);
  }

  /**
   * Group rows whose message is gone (deleted by a Java client or by hand): up to `limit` of them
   * are deleted; returns how many. Run by the expiry cleanup.
   */
  async deleteOrphanGroups(limit: number): Promise<number> {
    if (this.on.groupTable === undefined) return 0;
    const s = this.orphanGroupsStatement(limit);
    const rows = await this.on.sql.query<{ id: string }>(s);
    await this.groups.deleteGroupsOf(
      this.on.sql,
      rows.map((r) => r.id),
    );
    return rows.length;
  }

  /** Up to `limit` ids of group rows whose message is gone. */
  orphanGroupsStatement(limit: number): Statement {
    return statement(
      this.on.d.limit(
        `SELECT hf_g.ID AS id FROM ${this.on.groupTable} hf_g LEFT JOIN ${this.on.table} hf_m ON hf_m.ID = hf_g.ID ` +
          `WHERE hf_m.ID IS NULL`,
        limit,
      ),
    );
  }
}
