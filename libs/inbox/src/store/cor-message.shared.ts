import {
  indexName,
  type SqlClient,
  tableName,
  toNumber,
  type SqlDialect,
  type TimestampSql,
  type StatementBinder,
} from '@holdfast/core/kit';
import type { MessageStatus } from '../inbox-message';
import { COR_MESSAGE_ORDER_INDEX, COR_MESSAGE_TABLE } from './cor-message.table';
import type { MessageRow, Now, RawRow } from './cor-message.rows';
import { FAR_FUTURE } from './next-retry';
import type { PriorityLayout } from './cor-message.priority';
import { keyedRows, type KeyedRows } from './inbox-sql.dialect';
import type { FairShareLayout } from './cor-message.fair-share';

/**
 * What the inbox knows of its table once it has looked (see CorMessageStore.configure): each
 * unset fact is the default of a table not looked at yet.
 */
export interface CorMessageFacts {
  /** How the time columns are written and read (see detectCorMessageLayout); the dialect's default otherwise. */
  t?: TimestampSql;
  /** The delivery-order index exists (MySQL/MariaDB force it then). */
  hasOrderIndex?: boolean;
  /**
   * PostgreSQL: the channel each insert notifies, in its own statement (so in its own
   * transaction: one notification per insert statement, sent when it commits). Unset: no NOTIFY.
   */
  notifyChannel?: string;
  /**
   * `<prefix>HOLDFAST_INBOX_GROUP` when `groupBy` is set: accepts write each message's group
   * there, claims take only messages whose group has no earlier message waiting elsewhere
   * (strict order per group), deletes remove the group rows with their messages.
   */
  groupTable?: string;
  /**
   * `traceContext` on and the table has TRACE_CONTEXT (see cor-message.trace-context.ts): accepts
   * write the accepting context there, claims read it back. Off: neither names the column.
   */
  traceContext?: boolean;
  /** Set when the inbox option `priorities` is on (and the PRIORITY column exists): claims order by it first. */
  priority?: PriorityLayout;
  /**
   * Set when the inbox option `fairShare` is on: claims take at most `perKey` messages of one
   * type name, round by round across the names (see COR_MESSAGE_TYPE_INDEX).
   */
  fairShare?: FairShareLayout;
}

/**
 * What a claim reads of its rows: no ERROR (a delivery never shows it, and a message retried
 * after a failure would bring its stack trace back with every claim), and no NEXT_RETRY when the
 * claim wrote a lease end it chose itself (`leaseKnown`: the row's is that one). Times as the
 * database computes epoch ms where that is cheaper than parsing them here (SQLite: its ISO text,
 * otherwise read by a regular expression and Date.parse for every row and column), and the
 * database clock computed once per claim there. Measured on SQLite, the claim statement alone
 * (200,000 rows claimed 1,000 at a time and deleted, better-sqlite3): 5.3–5.6 µs per row before,
 * 4.7–4.9 µs after; the driver by hand, returning only what a handler gets, 3.8 µs.
 */
export interface ClaimColumns {
  leaseKnown: boolean;
}

/**
 * What every job on `<prefix>COR_MESSAGE` shares, handed to each job's constructor: the client,
 * the names, the facts learnt of the table (CorMessageFacts), and the pieces every statement
 * builds from. Times are the seed's timestamp columns, compared with the database clock inside
 * each statement unless a test clock supplies `now` (epoch ms, bound). Rows come back with times
 * in epoch ms. Nothing in it changes after construction: new facts make a new one.
 */
export class CorMessageShared {
  readonly table: string;
  /** The delivery-order index (MySQL/MariaDB force it when it exists). */
  readonly orderIndex: string;
  readonly hasOrderIndex: boolean;
  /** Due/parked boundary: RETRIES at or above it is parked (exhausted), whatever NEXT_RETRY says. */
  readonly maxRetries: number;
  /** How the time columns are written and read (see detectCorMessageLayout). */
  readonly t: TimestampSql;
  /** See CorMessageFacts.notifyChannel. */
  readonly notifyChannel?: string;
  /** See CorMessageFacts.groupTable. */
  readonly groupTable?: string;
  /** See CorMessageFacts.traceContext. */
  readonly traceContext: boolean;
  /** See CorMessageFacts.priority. */
  readonly priority?: PriorityLayout;
  /** See CorMessageFacts.fairShare. */
  readonly fairShare?: FairShareLayout;

  constructor(
    readonly sql: SqlClient,
    readonly prefix: string,
    maxRetries: number,
    readonly facts: CorMessageFacts = {},
  ) {
    this.table = tableName(prefix, COR_MESSAGE_TABLE.name);
    this.t = facts.t ?? sql.dialect.timestampSql();
    this.maxRetries = Math.max(1, maxRetries);
    this.orderIndex = indexName(prefix, COR_MESSAGE_ORDER_INDEX);
    this.hasOrderIndex = facts.hasOrderIndex ?? false;
    this.notifyChannel = facts.notifyChannel;
    this.groupTable = facts.groupTable;
    this.traceContext = facts.traceContext ?? false;
    this.priority = facts.priority;
    this.fairShare = facts.fairShare;
  }

  /** The same table and facts through another client (a caller's transaction). */
  through(sql: SqlClient): CorMessageShared {
    return new CorMessageShared(sql, this.prefix, this.maxRetries, this.facts);
  }

  /** The same client and table with `more` facts learnt. */
  learnt(more: CorMessageFacts): CorMessageShared {
    return new CorMessageShared(this.sql, this.prefix, this.maxRetries, { ...this.facts, ...more });
  }

  /** False where NEXT_RETRY cannot hold FAR_FUTURE, so messages cannot be paused. */
  get canPause(): boolean {
    return FAR_FUTURE <= this.t.maxMillis;
  }

  get d(): SqlDialect {
    return this.sql.dialect;
  }

  /** now: the database clock inline, or the bound test clock. */
  now(b: StatementBinder, now: Now): string {
    return now === undefined ? this.t.now : this.t.at(b, now);
  }

  /** now + delta: the database clock plus a bound delta, or the bound test clock plus delta. */
  nowPlus(b: StatementBinder, now: Now, delta: number): string {
    return now === undefined ? this.t.nowPlus(b, delta) : this.t.at(b, now + delta);
  }

  /** FAR_FUTURE as a constant of the column's type (never a parameter). */
  farFuture(): string {
    return this.t.literal(FAR_FUTURE);
  }

  /** `claim`: the columns a claim reads (see ClaimColumns); else every column, for lists. */
  columns(withPayload: boolean, claim?: ClaimColumns): string {
    return this.selected(withPayload, claim)
      .map(([expression, alias]) => `${expression} AS ${alias}`)
      .join(', ');
  }

  /** The names `columns(withPayload, claim)` gives its columns, to select them again from a CTE. */
  columnAliases(withPayload: boolean, claim?: ClaimColumns): string {
    return this.selected(withPayload, claim)
      .map(([, alias]) => alias)
      .join(', ');
  }

  private selected(withPayload: boolean, claim?: ClaimColumns): [expression: string, alias: string][] {
    const t = this.t;
    const time = (column: string) => (claim && t.millis ? t.millis(column) : t.read(column));
    const columns: [string, string][] = [
      ['ID', 'id'],
      ['PAYLOAD_ENCODING', 'payload_encoding'],
      ['PAYLOAD_TYPE_NAMESPACE', 'ns'],
      ['PAYLOAD_TYPE_NAME', 'name'],
      ['PAYLOAD_TYPE_REVISION', 'revision'],
    ];
    if (withPayload) columns.push(['PAYLOAD', 'payload']);
    // Aliases unlike the column names: ORDER BY INSERTED must mean the column (and its index).
    columns.push(
      [time('INSERTED'), 'inserted_ms'],
      ['TTL_DURATION', 'ttl'],
      [time('EXPIRATION'), 'expiration_ms'],
    );
    columns.push(['RETRIES', 'retries']);
    if (this.priority) columns.push(['PRIORITY', 'priority']);
    if (!claim?.leaseKnown) columns.push([t.read('NEXT_RETRY'), 'next_retry_ms']);
    if (!claim) columns.push(['ERROR', 'error']);
    if (claim && this.traceContext) columns.push(['TRACE_CONTEXT', 'trace_context']);
    return columns;
  }

  /**
   * The database clock as a claim returns it with every row: where the database computes epoch
   * ms more cheaply than the client parses its time (SQLite), once per statement (a scalar
   * subquery without a reference to the row is evaluated once), as a number. A test clock is
   * bound once and read as it is.
   */
  claimClock(b: StatementBinder, now: Now): string {
    if (now !== undefined || !this.t.millis) return this.t.read(this.now(b, now));
    return `(SELECT ${this.t.millis(this.t.now)})`;
  }

  read(raw: RawRow): MessageRow {
    const t = this.t;
    const row: MessageRow = {
      id: raw.id,
      encoding: raw.payload_encoding,
      // The seed's PAYLOAD_TYPE_NAMESPACE is NOT NULL: a type without one is stored as ''.
      namespace: raw.ns === null || raw.ns === undefined || raw.ns === '' ? null : raw.ns,
      name: raw.name,
      revision: raw.revision ?? null,
      payload: raw.payload,
      inserted: t.toMillis(raw.inserted_ms),
      ttl: raw.ttl ?? null,
      expiration:
        raw.expiration_ms === null || raw.expiration_ms === undefined ? null : t.toMillis(raw.expiration_ms),
      retries: toNumber(raw.retries),
      nextRetry:
        raw.next_retry_ms === null || raw.next_retry_ms === undefined ? null : t.toMillis(raw.next_retry_ms),
      error: raw.error ?? null,
    };
    if (raw.group_key !== null && raw.group_key !== undefined) row.group = raw.group_key;
    if (raw.trace_context !== null && raw.trace_context !== undefined) row.traceContext = raw.trace_context;
    if (raw.priority !== null && raw.priority !== undefined) row.priority = toNumber(raw.priority);
    return row;
  }

  /** SQL conditions per status; `n()` binds now once more (MySQL and SQLite number '?' by position). */
  statusCondition(status: MessageStatus, n: () => string, orphaned?: () => string): string {
    const notExpired = () => `(EXPIRATION IS NULL OR EXPIRATION > ${n()})`;
    const max = Math.trunc(this.maxRetries);
    switch (status) {
      case 'expired':
        return `(EXPIRATION IS NOT NULL AND EXPIRATION <= ${n()})`;
      // Exhausted (RETRIES >= maxRetries) is parked whatever NEXT_RETRY says, paused included:
      // camunda-bpm-correlate's MAX_RETRIES_REACHED, so the peer and Holdfast never disagree on
      // whether a row may be delivered (see next-retry.ts).
      case 'due':
        // `orphaned`: `OR …` terms for rows a claim of this node leased without an answer (see ClaimLease).
        return `RETRIES < ${max} AND (NEXT_RETRY IS NULL OR NEXT_RETRY <= ${n()}${orphaned?.() ?? ''}) AND ${notExpired()}`;
      case 'retrying':
        return `RETRIES < ${max} AND (NEXT_RETRY > ${n()} AND NEXT_RETRY < ${this.farFuture()}) AND ${notExpired()}`;
      case 'paused':
        return `RETRIES < ${max} AND NEXT_RETRY >= ${this.farFuture()} AND ${notExpired()}`;
      case 'parked':
        return `RETRIES >= ${max} AND ${notExpired()}`;
    }
  }

  /**
   * The rows with these ids, as a statement target (see keyedRows in inbox-sql.dialect.ts). PostgreSQL: one
   * array parameter (`ID = ANY($n)`), so the statement's text is the same for any number of ids
   * and it can stay parsed and planned per connection (see keyedTextIsFixed).
   */
  keyed(b: StatementBinder, ids: readonly string[]): KeyedRows {
    if (this.keyedTextIsFixed)
      return {
        from: this.table,
        deleteFrom: `FROM ${this.table}`,
        where: `ID = ANY(${this.idArray(b, ids)}) AND `,
      };
    return keyedRows(this.d, b, this.table, 'ID', ids);
  }

  /** True where keyed binds its ids as one array (PostgreSQL): statements built on it may be prepared. */
  get keyedTextIsFixed(): boolean {
    return this.d.name === 'postgres';
  }

  /** PostgreSQL: `ids` as one bound `VARCHAR[]`. */
  idArray(b: StatementBinder, ids: readonly string[]): string {
    return `${b.bind([...ids])}::VARCHAR[]`;
  }
}
