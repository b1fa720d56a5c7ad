import { toNumber, StatementBinder } from '@holdfast/core/kit';
import { PauseUnsupportedError } from '../errors';
import type { MessageStatus } from '../inbox-message';
import { CorMessageGroupedStatements } from './cor-message.groups';
import type { MessageRow, Now, RawRow } from './cor-message.rows';
import { FAR_FUTURE } from './next-retry';

/** What an admin does: counts, lists, one message read, paused, resumed, retried or deleted. */
export class CorMessageManagement extends CorMessageGroupedStatements {
  async list(
    status: MessageStatus | undefined,
    limit: number,
    offset: number,
    now: number,
  ): Promise<MessageRow[]> {
    const b = new StatementBinder(this.d);
    const where = status ? ` WHERE ${this.statusCondition(status, () => this.t.at(b, now))}` : '';
    const select = this.d.limit(
      `SELECT ${this.columns(false)} FROM ${this.table}${where} ORDER BY INSERTED, ID`,
      limit,
    );
    const rows = await this.sql.query<RawRow>(
      offset > 0 ? `${select} OFFSET ${Math.trunc(offset)}` : select,
      b.params,
    );
    return rows.map((r) => this.read(r));
  }

  async find(id: string, withPayload = false): Promise<MessageRow | undefined> {
    const b = new StatementBinder(this.d);
    const [row] = await this.sql.query<RawRow>(
      `SELECT ${this.columns(withPayload)} FROM ${this.table} WHERE ID = ${b.bind(id)}`,
      b.params,
    );
    return row ? this.read(row) : undefined;
  }

  async counts(now: number): Promise<Record<MessageStatus, number> & { total: number }> {
    const b = new StatementBinder(this.d);
    const statuses: MessageStatus[] = ['due', 'retrying', 'parked', 'paused', 'expired'];
    const sums = statuses.map(
      (s) => `SUM(CASE WHEN ${this.statusCondition(s, () => this.t.at(b, now))} THEN 1 ELSE 0 END) AS ${s}`,
    );
    const [row] = await this.sql.query<Record<string, unknown>>(
      `SELECT COUNT(*) AS total, ${sums.join(', ')} FROM ${this.table}`,
      b.params,
    );
    const out = { total: toNumber(row?.total ?? 0) } as Record<MessageStatus, number> & { total: number };
    for (const s of statuses) out[s] = toNumber(row?.[s] ?? 0) || 0;
    return out;
  }

  /**
   * Unexpired messages per RETRIES value, fewest first: what a reader that does not know the
   * inbox's maxRetries (the CLI) can show, since exhaustion is RETRIES >= maxRetries.
   */
  async countByRetries(now: number): Promise<{ retries: number; count: number }[]> {
    const b = new StatementBinder(this.d);
    const rows = await this.sql.query<{ r: unknown; c: unknown }>(
      `SELECT RETRIES AS r, COUNT(*) AS c FROM ${this.table} ` +
        `WHERE EXPIRATION IS NULL OR EXPIRATION > ${this.t.at(b, now)} GROUP BY RETRIES ORDER BY RETRIES`,
      b.params,
    );
    return rows.map((r) => ({ retries: toNumber(r.r), count: toNumber(r.c) }));
  }

  async countByType(): Promise<
    { namespace: string | null; name: string; revision: string | null; count: number }[]
  > {
    const rows = await this.sql.query<{
      ns: string | null;
      name: string;
      revision: string | null;
      c: unknown;
    }>(
      `SELECT PAYLOAD_TYPE_NAMESPACE AS ns, PAYLOAD_TYPE_NAME AS name, PAYLOAD_TYPE_REVISION AS revision, COUNT(*) AS c ` +
        `FROM ${this.table} GROUP BY PAYLOAD_TYPE_NAMESPACE, PAYLOAD_TYPE_NAME, PAYLOAD_TYPE_REVISION`,
    );
    return rows.map((r) => ({
      namespace: r.ns === null || r.ns === '' ? null : r.ns,
      name: r.name,
      revision: r.revision ?? null,
      count: toNumber(r.c),
    }));
  }

  /** Paused: NEXT_RETRY at the seed's FAR_FUTURE. */
  async pause(id: string): Promise<number> {
    if (!this.on.canPause) throw new PauseUnsupportedError(this.table, id);
    const b = new StatementBinder(this.d);
    const set = this.t.at(b, FAR_FUTURE);
    return this.sql.execute(
      `UPDATE ${this.table} SET NEXT_RETRY = ${set} WHERE ID = ${b.bind(id)}`,
      b.params,
    );
  }

  /**
   * A paused message back to its state before the pause: NEXT_RETRY NULL without failed attempts,
   * now with some (as camunda-bpm-correlate resumes: a row with RETRIES > 0 and no NEXT_RETRY is
   * never due for the peer). An exhausted one stays parked.
   */
  async resume(id: string, now: Now): Promise<number> {
    const b = new StatementBinder(this.d);
    const set = `CASE WHEN RETRIES = 0 THEN NULL ELSE ${this.now(b, now)} END`;
    const where = `ID = ${b.bind(id)} AND NEXT_RETRY >= ${this.farFuture()}`;
    return this.sql.execute(`UPDATE ${this.table} SET NEXT_RETRY = ${set} WHERE ${where}`, b.params);
  }

  /**
   * Due now, whatever its state: NEXT_RETRY now, and an exhausted message's RETRIES down to
   * maxRetries − 1, so it gets one more attempt and Holdfast and camunda-bpm-correlate both see
   * it due (the peer's cockpit retries an exhausted message the same way: retries below the
   * maximum, next retry set). Other messages keep their RETRIES.
   */
  async retryNow(id: string, now: Now): Promise<number> {
    const b = new StatementBinder(this.d);
    const max = Math.trunc(this.on.maxRetries);
    const set = this.now(b, now);
    return this.sql.execute(
      `UPDATE ${this.table} SET NEXT_RETRY = ${set}, ` +
        `RETRIES = CASE WHEN RETRIES >= ${max} THEN ${max - 1} ELSE RETRIES END WHERE ID = ${b.bind(id)}`,
      b.params,
    );
  }

  async setRetries(id: string, retries: number): Promise<number> {
    const b = new StatementBinder(this.d);
    return this.sql.execute(
      `UPDATE ${this.table} SET RETRIES = ${b.bind(retries)} WHERE ID = ${b.bind(id)}`,
      b.params,
    );
  }

  async delete(id: string): Promise<number> {
    const b = new StatementBinder(this.d);
    return this.groups.deleting([id], (client) =>
      client.execute(`DELETE FROM ${this.table} WHERE ID = ${b.bind(id)}`, b.params),
    );
  }
}
