import { monotonicMillis, statement, StatementBinder, toNumber, type SqlClient } from '@holdfast/core/kit';
import { parseMessageTypeLabel } from '../management/message-type-label';
import type { TypeFilter } from './cor-message.management';

/** One paused type as `<prefix>HOLDFAST_INBOX_PAUSE` holds it. */
export interface PauseRow {
  /** The type's label (see INBOX_PAUSE_TABLE). */
  type: string;
  pausedBy: string;
  /** Epoch ms, database clock. */
  pausedAt: number;
  reason: string | null;
}

/** A pause to record. */
export interface PauseEntry {
  type: string;
  actor: string;
  reason?: string;
}

/**
 * The statements on `<prefix>HOLDFAST_INBOX_PAUSE` (see INBOX_PAUSE_TABLE), and what a delivering
 * node last read of it: `snapshot(maxAgeMs)` reads the table again only when what it read is older
 * than `maxAgeMs` or was marked stale (a pause or resume through this object, or a notification
 * from another node), so a backlog claimed back to back reads it at most once per poll interval.
 */
export class InboxPauseStatements {
  private read?: { at: number; filters: readonly TypeFilter[] };

  constructor(
    private readonly sql: SqlClient,
    readonly table: string,
    /** PostgreSQL: the inbox's NOTIFY channel, told of each change so every node reads the table again. */
    private readonly notifyChannel?: string,
  ) {}

  async list(): Promise<PauseRow[]> {
    const rows = await this.sql.query<{
      type_key: string;
      paused_by: string;
      paused_at: unknown;
      reason: string | null;
    }>(
      statement(
        `SELECT TYPE_KEY AS type_key, PAUSED_BY AS paused_by, PAUSED_AT AS paused_at, REASON AS reason ` +
          `FROM ${this.table} ORDER BY TYPE_KEY`,
      ),
    );
    return rows.map((r) => ({
      type: r.type_key,
      pausedBy: r.paused_by,
      pausedAt: toNumber(r.paused_at),
      reason: r.reason ?? null,
    }));
  }

  /** Records the pause (replacing one of the same type); true when the type was not paused before. */
  async pause(entry: PauseEntry): Promise<boolean> {
    const d = this.sql.dialect;
    const fresh = await this.sql.transaction(async (tx) => {
      const b = new StatementBinder(d);
      const [before] = await tx.query<{ n: unknown }>(
        b.statement(`SELECT COUNT(*) AS n FROM ${this.table} WHERE TYPE_KEY = ${b.bind(entry.type)}`),
      );
      const now = await tx.nowMillis();
      const text = d.upsert({
        table: this.table,
        columns: ['TYPE_KEY', 'PAUSED_BY', 'PAUSED_AT', 'REASON'],
        keys: ['TYPE_KEY'],
      });
      await tx.execute(statement(text, [entry.type, entry.actor, now, entry.reason ?? null]));
      return toNumber(before?.n ?? 0) === 0;
    });
    await this.changed();
    return fresh;
  }

  /** Deletes the pause of `type`; true when there was one. */
  async resume(type: string): Promise<boolean> {
    const b = new StatementBinder(this.sql.dialect);
    const deleted = await this.sql.execute(
      b.statement(`DELETE FROM ${this.table} WHERE TYPE_KEY = ${b.bind(type)}`),
    );
    await this.changed();
    return deleted > 0;
  }

  /** Reads the table again at the next `snapshot`. */
  markStale(): void {
    this.read = undefined;
  }

  /**
   * The paused types as claim filters: what was read within `maxAgeMs` (monotonic), else read
   * now. The delivery loop calls it before each claim.
   */
  async snapshot(maxAgeMs: number): Promise<readonly TypeFilter[]> {
    const at = monotonicMillis();
    if (this.read && at - this.read.at < maxAgeMs) return this.read.filters;
    const filters = (await this.list()).map((row) => parseMessageTypeLabel(row.type));
    this.read = { at, filters };
    return filters;
  }

  /** Every node reads the table again: this one at once, the others on the NOTIFY (else at their next read). */
  private async changed(): Promise<void> {
    this.markStale();
    if (this.notifyChannel === undefined) return;
    const b = new StatementBinder(this.sql.dialect);
    await this.sql.query(
      b.statement(`SELECT pg_notify(${b.bind(this.notifyChannel)}, ${b.bind(PAUSE_NOTIFICATION)})`),
    );
  }
}

/** The payload of the notification a pause or resume sends on the inbox's channel. */
export const PAUSE_NOTIFICATION = 'pause';
