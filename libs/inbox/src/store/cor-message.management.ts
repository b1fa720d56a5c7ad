import { toNumber, StatementBinder, statement, type Statement } from '@holdfast/core/kit';
import { PauseUnsupportedError } from '../errors';
import type { MessageStatus } from '../inbox-message';
import type { CorMessageGroups } from './cor-message.groups';
import type { CorMessageShared } from './cor-message.shared';
import type { MessageRow, Now, RawRow } from './cor-message.rows';
import { FAR_FUTURE } from './next-retry';

/** The statuses `counts` counts, each a column of its row. */
const COUNTED: readonly MessageStatus[] = ['due', 'retrying', 'parked', 'paused', 'expired'];

/**
 * The messages of one type: `name` always; `namespace` and `revision` each a value, null (or '')
 * for none, or undefined for any.
 */
export interface TypeFilter {
  name: string;
  namespace?: string | null;
  revision?: string | null;
}

/** What an admin does: counts, lists, one message read, paused, resumed, retried or deleted. */
export class CorMessageManagement {
  constructor(
    private readonly on: CorMessageShared,
    private readonly groups: CorMessageGroups,
  ) {}

  async list(
    status: MessageStatus | undefined,
    limit: number,
    offset: number,
    now: number,
    type?: TypeFilter,
  ): Promise<MessageRow[]> {
    const s = this.listStatement(status, limit, offset, now, type);
    const rows = await this.on.sql.query<RawRow>(s);
    return rows.map((r) => this.on.read(r));
  }

  /** A page of messages in delivery order, of one status or all, of one type or all. */
  listStatement(
    status: MessageStatus | undefined,
    limit: number,
    offset: number,
    now: number,
    type?: TypeFilter,
  ): Statement {
    const b = new StatementBinder(this.on.d);
    const select = this.on.d.limit(
      `SELECT ${this.on.columns(false)} FROM ${this.on.table}${this.where(b, status, type, now)} ORDER BY INSERTED, ID`,
      limit,
    );
    return b.statement(offset > 0 ? `${select} OFFSET ${Math.trunc(offset)}` : select);
  }

  /** How many messages `list` would list with no limit: of one status or all, of one type or all. */
  async countMatching(
    status: MessageStatus | undefined,
    type: TypeFilter | undefined,
    now: number,
  ): Promise<number> {
    const s = this.countMatchingStatement(status, type, now);
    const [row] = await this.on.sql.query<{ c: unknown }>(s);
    return toNumber(row?.c ?? 0) || 0;
  }

  countMatchingStatement(
    status: MessageStatus | undefined,
    type: TypeFilter | undefined,
    now: number,
  ): Statement {
    const b = new StatementBinder(this.on.d);
    return b.statement(`SELECT COUNT(*) AS c FROM ${this.on.table}${this.where(b, status, type, now)}`);
  }

  /** The WHERE clause (with its leading space) of `list` and `countMatching`, or '' for every row. */
  private where(
    b: StatementBinder,
    status: MessageStatus | undefined,
    type: TypeFilter | undefined,
    now: number,
  ): string {
    const conditions: string[] = [];
    if (status) conditions.push(this.on.statusCondition(status, () => this.on.t.at(b, now)));
    if (type) {
      conditions.push(`PAYLOAD_TYPE_NAME = ${b.bind(type.name)}`);
      const column = (name: string, value: string | null | undefined) => {
        if (value === undefined) return;
        // None: NULL, or '' where the column is NOT NULL (camunda-bpm-correlate's seed DDL).
        conditions.push(
          value === null || value === '' ? `(${name} IS NULL OR ${name} = '')` : `${name} = ${b.bind(value)}`,
        );
      };
      column('PAYLOAD_TYPE_NAMESPACE', type.namespace);
      column('PAYLOAD_TYPE_REVISION', type.revision);
    }
    return conditions.length ? ` WHERE ${conditions.join(' AND ')}` : '';
  }

  async find(id: string, withPayload = false): Promise<MessageRow | undefined> {
    const s = this.findStatement(id, withPayload);
    const [row] = await this.on.sql.query<RawRow>(s);
    return row ? this.on.read(row) : undefined;
  }

  findStatement(id: string, withPayload = false): Statement {
    const b = new StatementBinder(this.on.d);
    return b.statement(
      `SELECT ${this.on.columns(withPayload)} FROM ${this.on.table} WHERE ID = ${b.bind(id)}`,
    );
  }

  async counts(now: number): Promise<Record<MessageStatus, number> & { total: number }> {
    const s = this.countsStatement(now);
    const [row] = await this.on.sql.query<Record<string, unknown>>(s);
    const out = { total: toNumber(row?.total ?? 0) } as Record<MessageStatus, number> & { total: number };
    for (const status of COUNTED) out[status] = toNumber(row?.[status] ?? 0) || 0;
    return out;
  }

  /** The total and the count per status, in one row. */
  countsStatement(now: number): Statement {
    const b = new StatementBinder(this.on.d);
    const sums = COUNTED.map(
      (s) =>
        `SUM(CASE WHEN ${this.on.statusCondition(s, () => this.on.t.at(b, now))} THEN 1 ELSE 0 END) AS ${s}`,
    );
    return b.statement(`SELECT COUNT(*) AS total, ${sums.join(', ')} FROM ${this.on.table}`);
  }

  /**
   * Unexpired messages per RETRIES value, fewest first: what a reader that does not know the
   * inbox's maxRetries (the CLI) can show, since exhaustion is RETRIES >= maxRetries.
   */
  async countByRetries(now: number): Promise<{ retries: number; count: number }[]> {
    const s = this.countByRetriesStatement(now);
    const rows = await this.on.sql.query<{ r: unknown; c: unknown }>(s);
    return rows.map((r) => ({ retries: toNumber(r.r), count: toNumber(r.c) }));
  }

  countByRetriesStatement(now: number): Statement {
    const b = new StatementBinder(this.on.d);
    return b.statement(
      `SELECT RETRIES AS r, COUNT(*) AS c FROM ${this.on.table} ` +
        `WHERE EXPIRATION IS NULL OR EXPIRATION > ${this.on.t.at(b, now)} GROUP BY RETRIES ORDER BY RETRIES`,
    );
  }

  async countByType(): Promise<
    { namespace: string | null; name: string; revision: string | null; count: number }[]
  > {
    const s = this.countByTypeStatement();
    const rows = await this.on.sql.query<{
      ns: string | null;
      name: string;
      revision: string | null;
      c: unknown;
    }>(s);
    return rows.map((r) => ({
      namespace: r.ns === null || r.ns === '' ? null : r.ns,
      name: r.name,
      revision: r.revision ?? null,
      count: toNumber(r.c),
    }));
  }

  countByTypeStatement(): Statement {
    return statement(
      `SELECT PAYLOAD_TYPE_NAMESPACE AS ns, PAYLOAD_TYPE_NAME AS name, PAYLOAD_TYPE_REVISION AS revision, COUNT(*) AS c ` +
        `FROM ${this.on.table} GROUP BY PAYLOAD_TYPE_NAMESPACE, PAYLOAD_TYPE_NAME, PAYLOAD_TYPE_REVISION`,
    );
  }

  /** Paused: NEXT_RETRY at the seed's FAR_FUTURE. */
  async pause(id: string): Promise<number> {
    if (!this.on.canPause) throw new PauseUnsupportedError(this.on.table, id);
    return this.run(this.pauseStatement(id));
  }

  pauseStatement(id: string): Statement {
    const b = new StatementBinder(this.on.d);
    const set = this.on.t.at(b, FAR_FUTURE);
    return b.statement(`UPDATE ${this.on.table} SET NEXT_RETRY = ${set} WHERE ID = ${b.bind(id)}`);
  }

  /**
   * A paused message back to its state before the pause: NEXT_RETRY NULL without failed attempts,
   * now with some (as camunda-bpm-correlate resumes: a row with RETRIES > 0 and no NEXT_RETRY is
   * never due for the peer). An exhausted one stays parked.
   */
  async resume(id: string, now: Now): Promise<number> {
    return this.run(this.resumeStatement(id, now));
  }

  resumeStatement(id: string, now: Now): Statement {
    const b = new StatementBinder(this.on.d);
    const set = `CASE WHEN RETRIES = 0 THEN NULL ELSE ${this.on.now(b, now)} END`;
    const where = `ID = ${b.bind(id)} AND NEXT_RETRY >= ${this.on.farFuture()}`;
    return b.statement(`UPDATE ${this.on.table} SET NEXT_RETRY = ${set} WHERE ${where}`);
  }

  /**
   * Due now, whatever its state: NEXT_RETRY now, and an exhausted message's RETRIES down to
   * maxRetries − 1, so it gets one more attempt and Holdfast and camunda-bpm-correlate both see
   * it due (the peer's cockpit retries an exhausted message the same way: retries below the
   * maximum, next retry set). Other messages keep their RETRIES.
   */
  async retryNow(id: string, now: Now): Promise<number> {
    return this.run(this.retryNowStatement(id, now));
  }

  retryNowStatement(id: string, now: Now): Statement {
    const b = new StatementBinder(this.on.d);
    const max = Math.trunc(this.on.maxRetries);
    const set = this.on.now(b, now);
    return b.statement(
      `UPDATE ${this.on.table} SET NEXT_RETRY = ${set}, ` +
        `RETRIES = CASE WHEN RETRIES >= ${max} THEN ${max - 1} ELSE RETRIES END WHERE ID = ${b.bind(id)}`,
    );
  }

  async setRetries(id: string, retries: number): Promise<number> {
    return this.run(this.setRetriesStatement(id, retries));
  }

  setRetriesStatement(id: string, retries: number): Statement {
    const b = new StatementBinder(this.on.d);
    return b.statement(`UPDATE ${this.on.table} SET RETRIES = ${b.bind(retries)} WHERE ID = ${b.bind(id)}`);
  }

  async delete(id: string): Promise<number> {
    const s = this.deleteStatement(id);
    return this.groups.deleting([id], (client) => client.execute(s));
  }

  deleteStatement(id: string): Statement {
    const b = new StatementBinder(this.on.d);
    return b.statement(`DELETE FROM ${this.on.table} WHERE ID = ${b.bind(id)}`);
  }

  private run(s: Statement): Promise<number> {
    return this.on.sql.execute(s);
  }
}
