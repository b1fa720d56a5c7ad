import { statement, StatementTemplate, toNumber, type SqlRowReader } from '@holdfast/core/kit';
import type { PayloadType } from '../payload/payload-type';
import { DatabaseClock } from './database-clock';
import type { FailoverRow } from './failover-row.codec';
import { NOT_NOW, type FailoverEntry } from './failover-store';
import { FailoverStoreQueryResolver } from './failover-store-query.resolver';
import type { SqlStoreState } from './sql-store.state';

/** The point read: a fixed text, kept planned per connection on PostgreSQL. */
const PREPARED = { prepared: true } as const;

/**
 * Point reads of a store in flight at once; a read that comes while this many are waiting for
 * their answer waits too, and goes with the others waiting by then in one read of many keys
 * (at most KEYS_PER_READ, of one failover). A recovery under load (an upstream down, its callers
 * all recovering) then costs the database one statement per several callers instead of one per
 * caller, and never takes more than this many of the application's connections; a read alone
 * goes at once, as before. Measured with `npm run bench -- failover-store` at 10 concurrent
 * callers: see docs/benchmarks.md.
 */
const READS_IN_FLIGHT = 4;
const KEYS_PER_READ = 32;
/**
 * No read waits behind the reads in flight once none of them has answered for this long (a
 * connection gone silent holds its read until the driver gives up on it): reads then go at once,
 * each on a connection of its own, as they would without READS_IN_FLIGHT.
 */
const STALLED_MS = 50;

/** A point read waiting for a read of many keys. */
interface WaitingRead {
  key: string;
  type?: PayloadType;
  resolve(entry: FailoverEntry<unknown> | undefined): void;
  reject(error: unknown): void;
}

/** The point read's values, in the order of its placeholders (see `texts`). */
interface FindKey {
  name: string;
  key: string;
}

/** The point read's text as a template: its two placeholders take the name, then the key. */
function findTemplate(sql: string): StatementTemplate<FindKey> {
  return new StatementTemplate<FindKey>(sql, ['name', 'key'], [undefined, undefined]);
}

interface FindReader {
  reader: SqlRowReader<FindKey>;
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

  /** Point reads (of one key or many) waiting for their answer. */
  private inFlight = 0;
  /** When a read in flight last answered, or the first of them was sent (performance.now()). */
  private progressAt = 0;
  /** Point reads waiting for one of those to answer, by failover name, in arrival order. */
  private readonly waiting = new Map<string, WaitingRead[]>();
  /** The pending look at reads that seem stalled (see checkStalled). */
  private stallCheck = false;
  /** False when the app's query resolver replaces `find` but not `findMany`: reads go one by one. */
  private manyKeys?: boolean;

  constructor(private readonly state: SqlStoreState) {}

  /** A read that waits for a read of many keys (by failover name, in arrival order). */
  private wait<T>(name: string, key: string, type?: PayloadType): Promise<FailoverEntry<T> | undefined> {
    return new Promise<FailoverEntry<T> | undefined>((resolve, reject) => {
      const read = { key, type, resolve, reject } as WaitingRead;
      const list = this.waiting.get(name);
      if (list) list.push(read);
      else this.waiting.set(name, [read]);
    });
  }

  /** Forgets the statements built so far (the resolvers changed). */
  reset(): void {
    this.findText = undefined;
    this.findReader = undefined;
    this.manyKeys = undefined;
  }

  /** Whether reads may wait for a read of many keys (see READS_IN_FLIGHT). */
  private readsManyKeys(): boolean {
    if (this.manyKeys === undefined) {
      const queries = this.state.queries;
      const base = FailoverStoreQueryResolver.prototype;
      this.manyKeys = queries.find === base.find || queries.findMany !== base.findMany;
    }
    return this.manyKeys;
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
    let reader = sql.rowReader(findTemplate(find));
    const needed = ['as_of', 'expire_on', 'payload', 'payload_class'];
    if (!reader || !needed.every((c) => reader!.columns.includes(c))) return (this.findReader = null);
    // The timestamps in epoch ms when the database computes them more cheaply than Date parses them.
    const millis = sql.dialect.timestampSql().millis;
    if (millis) {
      try {
        reader = sql.rowReader(
          findTemplate(
            `SELECT ${millis('as_of')} AS as_of, ${millis('expire_on')} AS expire_on, payload, payload_class FROM (${find})`,
          ),
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
    if (this.inFlight >= READS_IN_FLIGHT && this.readsManyKeys()) {
      const waited = this.wait<T>(name, key, type);
      if (DatabaseClock.monotonic() - this.progressAt > STALLED_MS) this.checkStalled();
      return waited;
    }
    if (this.inFlight++ === 0) this.progressAt = DatabaseClock.monotonic();
    const sample = this.wantsClock();
    const sent = sample ? DatabaseClock.monotonic() : 0;
    const texts = this.texts();
    const find = statement(sample ? texts.withClock : texts.plain, [name, key]);
    return sql.query<FailoverRow>(find, PREPARED).then(
      (rows) => {
        this.answered();
        const row = rows[0];
        if (row && sample) this.observeClock(row, sent);
        return row && this.state.rows.entry<T>(row, { name, key, type }, sql.dialect);
      },
      (error: unknown) => {
        this.answered();
        throw error;
      },
    );
  }

  /**
   * The reads in flight look stalled: decided once the answers that came meanwhile are read. A
   * turn of the event loop that ran for longer than STALLED_MS (a busy handler, a descheduled
   * process) has not read the answers waiting on its sockets yet. An immediate set from an
   * immediate runs after the next poll for I/O, whichever phase this turn is in: the answers are
   * read by then, and only reads still without one count as stalled. What waits then goes at
   * once, in reads of many keys, each on a connection of its own.
   */
  private checkStalled(): void {
    if (this.stallCheck) return;
    this.stallCheck = true;
    setImmediate(() =>
      setImmediate(() => {
        this.stallCheck = false;
        if (DatabaseClock.monotonic() - this.progressAt <= STALLED_MS) return;
        for (const [name, list] of this.waiting) {
          this.waiting.delete(name);
          for (let i = 0; i < list.length; i += KEYS_PER_READ)
            this.readMany(name, list.slice(i, i + KEYS_PER_READ));
        }
      }),
    );
  }

  /** A point read answered: the reads waiting go, up to READS_IN_FLIGHT reads of many keys. */
  private answered(): void {
    this.inFlight--;
    this.progressAt = DatabaseClock.monotonic();
    for (const [name, list] of this.waiting) {
      if (this.inFlight >= READS_IN_FLIGHT) return;
      const reads = list.length > KEYS_PER_READ ? list.splice(0, KEYS_PER_READ) : list;
      if (reads === list) this.waiting.delete(name);
      this.readMany(name, reads);
    }
  }

  /** One read of the waiting reads' keys of failover `name`; each gets its entry, or the error. */
  private readMany(name: string, reads: readonly WaitingRead[]): void {
    if (this.inFlight++ === 0) this.progressAt = DatabaseClock.monotonic();
    const { sql, queries, ctx } = this.state;
    const sample = this.wantsClock();
    const sent = sample ? DatabaseClock.monotonic() : 0;
    let s;
    try {
      s = queries.findMany(
        sample ? ctx : { ...ctx, clock: false },
        name,
        reads.map((r) => r.key),
      );
    } catch (error) {
      this.answered();
      for (const read of reads) read.reject(error);
      return;
    }
    sql.query<FailoverRow & { failover_key: string }>(s, PREPARED).then(
      (rows) => {
        this.answered();
        const byKey = new Map(rows.map((row) => [row.failover_key, row]));
        if (sample && rows.length) this.observeClock(rows[0], sent);
        for (const read of reads) {
          const row = byKey.get(read.key);
          try {
            read.resolve(
              row && this.state.rows.entry(row, { name, key: read.key, type: read.type }, sql.dialect),
            );
          } catch (error) {
            read.reject(error);
          }
        }
      },
      (error: unknown) => {
        this.answered();
        for (const read of reads) read.reject(error);
      },
    );
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
      const values = fast.reader.row({ name, key });
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
    const rows = sql.querySync<FailoverRow>(statement(sample ? texts.withClock : texts.plain, [name, key]));
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
    const rows = await sql.query<FailoverRow & { failover_key: string }>(s);
    return rows.map((row) => codec.entry<T>(row, { name, key: row.failover_key, type }, sql.dialect));
  }

  async countLive(name: string, now: Date): Promise<number> {
    const { maintenanceSql: sql, queries, ctx } = this.state;
    const s = queries.countLive(ctx, name, sql.dialect.timestampParam(now));
    const [row] = await sql.query<{ n: unknown }>(s);
    return toNumber(row.n);
  }
}
