import { toNumber, type SqlRowReader } from '@holdfast/core/kit';
import type { PayloadType } from '../payload/payload-type';
import { DatabaseClock } from './database-clock';
import type { FailoverRow } from './failover-row.codec';
import { NOT_NOW, type FailoverEntry } from './failover-store';
import type { SqlStoreState } from './sql-store.state';

/** The point read: a fixed text, kept planned per connection on PostgreSQL. */
const PREPARED = { prepared: true } as const;

interface FindReader {
  reader: SqlRowReader;
  /** Where each column sits in a row of the reader. */
  asOf: number;
  expireOn: number;
  payload: number;
  payloadClass: number;
}

/**
 * The reads of the SQL store: the point read (asynchronous, or synchronous on SQLite with its
 * connection free), sampling the database clock at most once a second; the reads of a whole
 * failover and its count.
 */
export class FailoverSqlReads {
  /** The point read's texts, with and without the clock (built once; see FailoverStoreQueryResolver). */
  private findText?: { plain: string; withClock: string };
  /**
   * The find statement as a synchronous row reader (SQLite) and where its columns sit in a row;
   * null when the client cannot read synchronously or the (custom) query lacks a column.
   */
  private findReader?: FindReader | null;

  constructor(private readonly state: SqlStoreState) {}

  /** Forgets the statements built so far (the resolvers changed). */
  reset(): void {
    this.findText = undefined;
    this.findReader = undefined;
  }

  private texts(): { plain: string; withClock: string } {
    if (!this.findText) {
      const { queries, ctx } = this.state;
      this.findText = {
        plain: queries.find({ ...ctx, clock: false }, '', '').sql,
        withClock: queries.find(ctx, '', '').sql,
      };
    }
    return this.findText;
  }

  private rowReader(): FindReader | null {
    if (this.findReader !== undefined) return this.findReader;
    const sql = this.state.sql;
    const find = this.texts().plain;
    let reader = sql.rowReader(find);
    const needed = ['as_of', 'expire_on', 'payload', 'payload_class'];
    if (!reader || !needed.every((c) => reader!.columns.includes(c))) return (this.findReader = null);
    // The timestamps in epoch ms when the database computes them more cheaply than Date parses them.
    const millis = sql.dialect.timestampSql().millis;
    if (millis) {
      try {
        reader = sql.rowReader(
          `SELECT ${millis('as_of')} AS as_of, ${millis('expire_on')} AS expire_on, payload, payload_class FROM (${find})`,
        )!;
      } catch {
        // A (custom) find that cannot be a subquery: read as it is.
      }
    }
    const [asOf, expireOn, payload, payloadClass] = needed.map((c) => reader!.columns.indexOf(c));
    return (this.findReader = { reader, asOf, expireOn, payload, payloadClass });
  }

  /** At most one read a second also reads the database clock (and corrects DatabaseClock). */
  private wantsClock(): boolean {
    return !this.state.dialectUnknown && this.state.dbClock.wantsSample();
  }

  /** Written with `then` rather than `async`: it is the recovery path's read. */
  find<T>(name: string, key: string, type?: PayloadType): Promise<FailoverEntry<T> | undefined> {
    const sql = this.state.sql;
    if (sql.runsSynchronously) {
      // SQLite with its connection free: the cached raw-mode read, no row object.
      try {
        const found = this.findNow<T>(name, key, type);
        if (found !== NOT_NOW) return Promise.resolve(found);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    const sample = this.wantsClock();
    const sent = sample ? DatabaseClock.monotonic() : 0;
    const texts = this.texts();
    return sql
      .query<FailoverRow>(sample ? texts.withClock : texts.plain, [name, key], PREPARED)
      .then((rows) => {
        const row = rows[0];
        if (row && sample) this.observeClock(row, sent);
        return row && this.state.rows.entry<T>(row, { name, key, type }, sql.dialect);
      });
  }

  /**
   * The same read, answered synchronously when the database can (SQLite with its connection
   * free): the recovery path then costs no promise hop beyond the upstream's own rejection.
   * NOT_NOW when it cannot; the caller then uses `find`.
   */
  findNow<T>(name: string, key: string, type?: PayloadType): FailoverEntry<T> | undefined | typeof NOT_NOW {
    const sql = this.state.sql;
    const sample = this.wantsClock();
    const fast = !sample && this.rowReader();
    if (fast) {
      // The common read: one cached statement, one row as an array, no object per row.
      const values = fast.reader.row([name, key]);
      if (values === undefined) return NOT_NOW;
      if (values === null) return undefined;
      const row: FailoverRow = {
        as_of: values[fast.asOf],
        expire_on: values[fast.expireOn],
        payload: values[fast.payload],
        payload_class: values[fast.payloadClass] as string,
      };
      return this.state.rows.entry<T>(row, { name, key, type }, sql.dialect);
    }
    const sent = sample ? DatabaseClock.monotonic() : 0;
    const texts = this.texts();
    const rows = sql.querySync<FailoverRow>(sample ? texts.withClock : texts.plain, [name, key]);
    if (!rows) return NOT_NOW;
    const row = rows[0];
    if (row && sample) this.observeClock(row, sent);
    return row && this.state.rows.entry<T>(row, { name, key, type }, sql.dialect);
  }

  private observeClock(row: FailoverRow, sent: number): void {
    if (row.db_now !== undefined && row.db_now !== null)
      this.state.dbClock.observe(toNumber(row.db_now), sent, DatabaseClock.monotonic());
  }

  async findAll<T>(name: string, type?: PayloadType): Promise<FailoverEntry<T>[]> {
    const { sql, queries, ctx, rows: codec } = this.state;
    const s = queries.findAll(ctx, name);
    const rows = await sql.query<FailoverRow & { failover_key: string }>(s.sql, s.params);
    return rows.map((row) => codec.entry<T>(row, { name, key: row.failover_key, type }, sql.dialect));
  }

  async countLive(name: string, now: Date): Promise<number> {
    const { maintenanceSql: sql, queries, ctx } = this.state;
    const s = queries.countLive(ctx, name, sql.dialect.timestampParam(now));
    const [row] = await sql.query<{ n: unknown }>(s.sql, s.params);
    return toNumber(row.n);
  }
}
