import { statement, StatementBinder, toNumber, type SqlClient } from '@holdfast/core/kit';
import { RATE_WINDOWS_KEPT } from './inbox-rate.table';

/** What a claim asks of one rate-limited key. */
export interface PermitRequest {
  /** The key (a message type name). */
  key: string;
  /** Permits wanted: the claimed messages of the key. */
  want: number;
  /** The key's limit per window. */
  limit: number;
  /** The key's window, ms. */
  intervalMs: number;
}

/** What a key was granted, and when its next window starts (epoch ms, database clock). */
export interface PermitGrant {
  key: string;
  granted: number;
  windowEnd: number;
}

/** The window of `intervalMs` that holds `now`: windows are aligned to multiples of the interval. */
export function windowStart(now: number, intervalMs: number): number {
  return Math.floor(now / intervalMs) * intervalMs;
}

/**
 * The statements on `<prefix>HOLDFAST_INBOX_RATE` (see INBOX_RATE_TABLE): permits taken in one
 * transaction for every rate-limited key of a claim, keys in order (two nodes lock them in the
 * same order). Per key: the window's row is inserted when missing (an insert that leaves an
 * existing row alone), read under a row lock, and its PERMITS raised by what is granted, at most
 * what is left of the limit. The row lock makes nodes that claim the same key at once take
 * their permits one after the other: together they never pass the limit.
 */
export class InboxRateStatements {
  constructor(
    private readonly sql: SqlClient,
    readonly table: string,
  ) {}

  /**
   * Takes permits for each request in the window that holds `now` (the claim's database clock:
   * every node's windows are the same ones).
   */
  async take(requests: readonly PermitRequest[], now: number): Promise<PermitGrant[]> {
    const sorted = [...requests].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return this.sql.transaction(
      async (tx) => {
        const grants: PermitGrant[] = [];
        for (const request of sorted) grants.push(await this.takeOne(tx, request, now));
        return grants;
      },
      { isolation: 'read committed' },
    );
  }

  private async takeOne(tx: SqlClient, r: PermitRequest, now: number): Promise<PermitGrant> {
    const d = tx.dialect;
    const start = windowStart(now, r.intervalMs);
    const windowEnd = start + r.intervalMs;
    // Insert the window's row unless it exists (PERMITS defaults to 0); an existing row is left as it is.
    const keys = ['RATE_KEY', 'WINDOW_START'];
    await tx.execute(statement(d.upsert({ table: this.table, columns: keys, keys }), [r.key, start]));
    const read = new StatementBinder(d);
    const where = `RATE_KEY = ${read.bind(r.key)} AND WINDOW_START = ${read.bind(start)}`;
    const [row] = await tx.query<{ permits: unknown }>(
      read.statement(`SELECT PERMITS AS permits FROM ${this.table} WHERE ${where}${d.forUpdate()}`),
    );
    const used = toNumber(row?.permits ?? 0);
    const granted = Math.max(0, Math.min(r.want, r.limit - used));
    if (granted > 0) {
      const b = new StatementBinder(d);
      const set = `PERMITS = PERMITS + ${b.bind(granted)}`;
      await tx.execute(
        b.statement(
          `UPDATE ${this.table} SET ${set} WHERE RATE_KEY = ${b.bind(r.key)} AND WINDOW_START = ${b.bind(start)}`,
        ),
      );
    }
    if (used === 0) {
      // The first permits of this window: the key's old windows go.
      const b = new StatementBinder(d);
      const before = start - RATE_WINDOWS_KEPT * r.intervalMs;
      await tx.execute(
        b.statement(
          `DELETE FROM ${this.table} WHERE RATE_KEY = ${b.bind(r.key)} AND WINDOW_START < ${b.bind(before)}`,
        ),
      );
    }
    return { key: r.key, granted, windowEnd };
  }

  /** The permits granted per window of `key`, oldest first (tests, admins). */
  async windows(key: string): Promise<{ start: number; permits: number }[]> {
    const b = new StatementBinder(this.sql.dialect);
    const rows = await this.sql.query<{ start: unknown; permits: unknown }>(
      b.statement(
        `SELECT WINDOW_START AS start, PERMITS AS permits FROM ${this.table} WHERE RATE_KEY = ${b.bind(key)} ORDER BY WINDOW_START`,
      ),
    );
    return rows.map((row) => ({ start: toNumber(row.start), permits: toNumber(row.permits) }));
  }
}
