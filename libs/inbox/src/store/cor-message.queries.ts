import { SqlClient, tableName, toNumber, type ColumnType } from '@holdfast/core';
import type { MessageStatus } from '../inbox-message';
import { Binder } from './binder';
import { COR_MESSAGE_TABLE } from './cor-message.table';
import { PARKED, PAUSED, SENTINEL_FLOOR } from './next-retry';

/** A row to insert: everything already validated and encoded. */
export interface NewMessageRow {
  id: string;
  encoding: string;
  namespace: string | null;
  name: string;
  revision: string | null;
  payload: Buffer;
  ttl: string | null;
  /** Relative expiry (INSERTED + ttlMs) … */
  ttlMs: number | null;
  /** … or an absolute one in epoch ms. */
  expiration: number | null;
}

/** A row as read back (BIGINTs converted). */
export interface MessageRow {
  id: string;
  encoding: string;
  namespace: string | null;
  name: string;
  revision: string | null;
  payload?: unknown;
  inserted: number;
  ttl: string | null;
  expiration: number | null;
  retries: number;
  nextRetry: number | null;
  error: string | null;
}

interface RawRow {
  id: string;
  payload_encoding: string;
  ns: string | null;
  name: string;
  revision: string | null;
  payload?: unknown;
  inserted: unknown;
  ttl: string | null;
  expiration: unknown;
  retries: unknown;
  next_retry: unknown;
  error: string | null;
}

/** `now` is either a bound value (an injected clock) or undefined: the database clock inline. */
export type Now = number | undefined;

/**
 * Every statement on `<prefix>COR_MESSAGE`, built from the dialect's pieces. Times are epoch ms
 * of the database clock (`dialect.nowMillis`) unless a test clock supplies `now`.
 */
export class CorMessageQueries {
  readonly table: string;
  private readonly d;

  constructor(
    readonly sql: SqlClient,
    prefix: string,
  ) {
    this.table = tableName(prefix, COR_MESSAGE_TABLE.name);
    this.d = sql.dialect;
  }

  private now(b: Binder, now: Now): string {
    return now === undefined ? this.d.nowMillis : b.bind(now);
  }

  /**
   * now + delta: computed here when now is bound (PostgreSQL cannot type `$1 + $2`), else the
   * database clock expression plus a bound delta.
   */
  private nowPlus(b: Binder, now: Now, delta: number): string {
    return now === undefined ? `${this.d.nowMillis} + ${b.bind(delta)}` : b.bind(now + delta);
  }

  private columns(withPayload: boolean): string {
    return [
      'ID AS id',
      'PAYLOAD_ENCODING AS payload_encoding',
      'PAYLOAD_TYPE_NAMESPACE AS ns',
      'PAYLOAD_TYPE_NAME AS name',
      'PAYLOAD_TYPE_REVISION AS revision',
      ...(withPayload ? ['PAYLOAD AS payload'] : []),
      'INSERTED AS inserted',
      'TTL_DURATION AS ttl',
      'EXPIRATION AS expiration',
      'RETRIES AS retries',
      'NEXT_RETRY AS next_retry',
      'ERROR AS error',
    ].join(', ');
  }

  private read(raw: RawRow): MessageRow {
    const expiration =
      raw.expiration === null || raw.expiration === undefined ? null : toNumber(raw.expiration);
    const nextRetry =
      raw.next_retry === null || raw.next_retry === undefined ? null : toNumber(raw.next_retry);
    return {
      id: raw.id,
      encoding: raw.payload_encoding,
      namespace: raw.ns ?? null,
      name: raw.name,
      revision: raw.revision ?? null,
      payload: raw.payload,
      inserted: toNumber(raw.inserted),
      ttl: raw.ttl ?? null,
      expiration,
      retries: toNumber(raw.retries),
      nextRetry,
      error: raw.error ?? null,
    };
  }

  /** SQL conditions per status; `n()` binds now once more (MySQL and SQLite number '?' by position). */
  private statusCondition(status: MessageStatus, n: () => string): string {
    const notExpired = () => `(EXPIRATION IS NULL OR EXPIRATION > ${n()})`;
    switch (status) {
      case 'expired':
        return `(EXPIRATION IS NOT NULL AND EXPIRATION <= ${n()})`;
      case 'due':
        return `(NEXT_RETRY IS NULL OR NEXT_RETRY <= ${n()}) AND ${notExpired()}`;
      case 'retrying':
        return `(NEXT_RETRY > ${n()} AND NEXT_RETRY < ${SENTINEL_FLOOR}) AND ${notExpired()}`;
      case 'paused':
        return `NEXT_RETRY = ${PAUSED} AND ${notExpired()}`;
      case 'parked':
        return `NEXT_RETRY = ${PARKED} AND ${notExpired()}`;
    }
  }

  // ---- accept ------------------------------------------------------------------------------

  /** The ids among `ids` that already exist. */
  async existingIds(ids: readonly string[]): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const b = new Binder(this.d);
    const rows = await this.sql.query<{ id: string }>(
      `SELECT ID AS id FROM ${this.table} WHERE ID IN (${b.list(ids)})`,
      b.params,
    );
    return new Set(rows.map((r) => r.id));
  }

  /**
   * One multi-row INSERT; INSERTED is the database clock of this statement. A duplicate id makes
   * the whole statement fail (no conflict clause: its affected-row count is ambiguous on MariaDB),
   * and the caller sorts that out.
   */
  async insert(rows: readonly NewMessageRow[], now: Now): Promise<number> {
    if (rows.length > 1 && this.d.arraySource) return this.insertFromArrays(rows, now);
    const b = new Binder(this.d);
    // Bound in the order the placeholders appear: MySQL and SQLite number '?' by position.
    const values = rows.map((r) => {
      // NULLs as literals: fewer parameters make large inserts noticeably cheaper to parse.
      const opt = (v: string | null) => (v === null ? 'NULL' : b.bind(v));
      const head = `${b.bind(r.id)}, ${b.bind(r.encoding)}, ${opt(r.namespace)}, ${b.bind(r.name)}, ${opt(r.revision)}, ${b.bind(r.payload)}`;
      const inserted = this.now(b, now);
      const ttl = opt(r.ttl);
      const expiration =
        r.expiration !== null
          ? b.bind(r.expiration)
          : r.ttlMs !== null
            ? this.nowPlus(b, now, r.ttlMs)
            : 'NULL';
      return `(${head}, ${inserted}, ${ttl}, ${expiration}, 0, NULL, NULL)`;
    });
    return this.sql.execute(
      `INSERT INTO ${this.table} (ID, PAYLOAD_ENCODING, PAYLOAD_TYPE_NAMESPACE, PAYLOAD_TYPE_NAME, PAYLOAD_TYPE_REVISION, ` +
        `PAYLOAD, INSERTED, TTL_DURATION, EXPIRATION, RETRIES, NEXT_RETRY, ERROR) VALUES ${values.join(', ')}`,
      b.params,
    );
  }

  /**
   * The same insert where the database takes arrays (PostgreSQL): one bound array per column and
   * `INSERT ... SELECT ... FROM UNNEST(...)`, nine parameters for any number of rows, instead of a
   * VALUES list whose thousands of parameters cost more to parse and bind than the rows themselves.
   */
  private insertFromArrays(rows: readonly NewMessageRow[], now: Now): Promise<number> {
    const b = new Binder(this.d);
    const text = (length: number): ColumnType => ({ kind: 'varchar', length });
    const column = (name: string, type: ColumnType, values: unknown[]) => ({
      name,
      type,
      placeholder: b.bind(values),
    });
    const source = this.d.arraySource!([
      column(
        'id',
        text(64),
        rows.map((r) => r.id),
      ),
      column(
        'enc',
        text(64),
        rows.map((r) => r.encoding),
      ),
      column(
        'ns',
        text(128),
        rows.map((r) => r.namespace),
      ),
      column(
        'name',
        text(128),
        rows.map((r) => r.name),
      ),
      column(
        'rev',
        text(64),
        rows.map((r) => r.revision),
      ),
      column(
        'payload',
        { kind: 'blob' },
        rows.map((r) => r.payload),
      ),
      column(
        'ttl',
        text(64),
        rows.map((r) => r.ttl),
      ),
      column(
        'exp',
        { kind: 'bigint' },
        rows.map((r) => r.expiration),
      ),
      column(
        'ttlms',
        { kind: 'bigint' },
        rows.map((r) => r.ttlMs),
      ),
    ]);
    const inserted = `CAST(${this.now(b, now)} AS BIGINT)`;
    return this.sql.execute(
      `INSERT INTO ${this.table} (ID, PAYLOAD_ENCODING, PAYLOAD_TYPE_NAMESPACE, PAYLOAD_TYPE_NAME, PAYLOAD_TYPE_REVISION, ` +
        `PAYLOAD, INSERTED, TTL_DURATION, EXPIRATION, RETRIES, NEXT_RETRY, ERROR) ` +
        `SELECT u.id, u.enc, u.ns, u.name, u.rev, u.payload, ${inserted}, u.ttl, COALESCE(u.exp, ${inserted} + u.ttlms), 0, NULL, NULL ` +
        `FROM ${source}`,
      b.params,
    );
  }

  // ---- delivery ----------------------------------------------------------------------------

  /**
   * Claims up to `limit` due, unexpired messages, oldest first: locks them (SKIP LOCKED where the
   * database has it; SQLite's write transaction locks the file) and leases them until
   * `now + leaseMs` by moving NEXT_RETRY, so no other node selects them until the lease ends.
   */
  async claim(limit: number, now: Now, leaseMs: number): Promise<{ rows: MessageRow[]; now: number }> {
    return this.sql.transaction(async (tx) => {
      const b = new Binder(this.d);
      // The clock is read in the same statement (no extra round trip) and handed back, so the
      // caller checks expiry against the time the rows were selected at.
      const select = this.d.limit(
        `SELECT ${this.now(b, now)} AS db_now, ${this.columns(true)} FROM ${this.table} ` +
          `WHERE ${this.statusCondition('due', () => this.now(b, now))} ORDER BY INSERTED, ID`,
        limit,
      );
      const raw = await tx.query<RawRow & { db_now: unknown }>(
        `${select}${this.d.forUpdate(this.d.supportsSkipLocked)}`,
        b.params,
      );
      if (!raw.length) return { rows: [], now: now ?? NaN };
      const rows = raw.map((r) => this.read(r));
      const u = new Binder(this.d);
      const lease = this.nowPlus(u, now, leaseMs);
      await tx.execute(
        `UPDATE ${this.table} SET NEXT_RETRY = ${lease} WHERE ID IN (${u.list(rows.map((r) => r.id))})`,
        u.params,
      );
      return { rows, now: toNumber(raw[0].db_now) };
    });
  }

  /** Delivered: the rows are gone. */
  async deleteDelivered(ids: readonly string[]): Promise<number> {
    if (!ids.length) return 0;
    const b = new Binder(this.d);
    return this.sql.execute(`DELETE FROM ${this.table} WHERE ID IN (${b.list(ids)})`, b.params);
  }

  /**
   * A failed attempt. Applies only if nobody else recorded an attempt meanwhile (RETRIES is
   * unchanged: a counter, never a timestamp, as the compare-and-set token) and no admin paused
   * or parked it. `delayMs` undefined parks the message.
   */
  async recordFailure(
    id: string,
    seenRetries: number,
    error: string,
    delayMs: number | undefined,
    now: Now,
  ): Promise<boolean> {
    const b = new Binder(this.d);
    const retries = b.bind(seenRetries + 1);
    const next = delayMs === undefined ? b.bind(PARKED) : this.nowPlus(b, now, Math.round(delayMs));
    const err = b.bind(error);
    const where = `ID = ${b.bind(id)} AND RETRIES = ${b.bind(seenRetries)} AND (NEXT_RETRY IS NULL OR NEXT_RETRY < ${SENTINEL_FLOOR})`;
    return (
      (await this.sql.execute(
        `UPDATE ${this.table} SET RETRIES = ${retries}, NEXT_RETRY = ${next}, ERROR = ${err} WHERE ${where}`,
        b.params,
      )) > 0
    );
  }

  /**
   * Gives leased messages back without counting an attempt: due at `now + delayMs` (0: at once).
   * `error` (if given) is stored so an admin sees why (e.g. no handler).
   */
  async release(ids: readonly string[], delayMs: number, now: Now, error?: string): Promise<number> {
    if (!ids.length) return 0;
    const b = new Binder(this.d);
    const next = delayMs > 0 ? this.nowPlus(b, now, Math.round(delayMs)) : 'NULL';
    const err = error === undefined ? '' : `, ERROR = ${b.bind(error)}`;
    return this.sql.execute(
      `UPDATE ${this.table} SET NEXT_RETRY = ${next}${err} WHERE ID IN (${b.list(ids)}) AND (NEXT_RETRY IS NULL OR NEXT_RETRY < ${SENTINEL_FLOOR})`,
      b.params,
    );
  }

  /** Up to `limit` ids of expired messages. */
  async expiredIds(limit: number, now: Now): Promise<string[]> {
    const b = new Binder(this.d);
    const n = this.now(b, now);
    const rows = await this.sql.query<{ id: string }>(
      this.d.limit(
        `SELECT ID AS id FROM ${this.table} WHERE EXPIRATION IS NOT NULL AND EXPIRATION <= ${n}`,
        limit,
      ),
      b.params,
    );
    return rows.map((r) => r.id);
  }

  async deleteExpired(ids: readonly string[], now: Now): Promise<number> {
    if (!ids.length) return 0;
    const b = new Binder(this.d);
    const list = b.list(ids);
    return this.sql.execute(
      `DELETE FROM ${this.table} WHERE ID IN (${list}) AND EXPIRATION IS NOT NULL AND EXPIRATION <= ${this.now(b, now)}`,
      b.params,
    );
  }

  // ---- management --------------------------------------------------------------------------

  async list(
    status: MessageStatus | undefined,
    limit: number,
    offset: number,
    now: number,
  ): Promise<MessageRow[]> {
    const b = new Binder(this.d);
    const where = status ? ` WHERE ${this.statusCondition(status, () => b.bind(now))}` : '';
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
    const b = new Binder(this.d);
    const [row] = await this.sql.query<RawRow>(
      `SELECT ${this.columns(withPayload)} FROM ${this.table} WHERE ID = ${b.bind(id)}`,
      b.params,
    );
    return row ? this.read(row) : undefined;
  }

  async counts(now: number): Promise<Record<MessageStatus, number> & { total: number }> {
    const b = new Binder(this.d);
    const statuses: MessageStatus[] = ['due', 'retrying', 'parked', 'paused', 'expired'];
    const sums = statuses.map(
      (s) => `SUM(CASE WHEN ${this.statusCondition(s, () => b.bind(now))} THEN 1 ELSE 0 END) AS ${s}`,
    );
    const [row] = await this.sql.query<Record<string, unknown>>(
      `SELECT COUNT(*) AS total, ${sums.join(', ')} FROM ${this.table}`,
      b.params,
    );
    const out = { total: toNumber(row?.total ?? 0) } as Record<MessageStatus, number> & { total: number };
    for (const s of statuses) out[s] = toNumber(row?.[s] ?? 0) || 0;
    return out;
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
      namespace: r.ns ?? null,
      name: r.name,
      revision: r.revision ?? null,
      count: toNumber(r.c),
    }));
  }

  /** Sets NEXT_RETRY (null, PAUSED…) of one message; `onlyIf` restricts to a current value. */
  async setNextRetry(id: string, value: number | null, onlyIf?: number): Promise<number> {
    const b = new Binder(this.d);
    const set = value === null ? 'NULL' : b.bind(value);
    const where = `ID = ${b.bind(id)}${onlyIf === undefined ? '' : ` AND NEXT_RETRY = ${b.bind(onlyIf)}`}`;
    return this.sql.execute(`UPDATE ${this.table} SET NEXT_RETRY = ${set} WHERE ${where}`, b.params);
  }

  async setRetries(id: string, retries: number): Promise<number> {
    const b = new Binder(this.d);
    return this.sql.execute(
      `UPDATE ${this.table} SET RETRIES = ${b.bind(retries)} WHERE ID = ${b.bind(id)}`,
      b.params,
    );
  }

  async delete(id: string): Promise<number> {
    const b = new Binder(this.d);
    return this.sql.execute(`DELETE FROM ${this.table} WHERE ID = ${b.bind(id)}`, b.params);
  }
}
