import { SchemaManager, tableName, type SqlClient } from '@holdfast/core/kit';
import { MESSAGE_STATUSES, type MessageStatus } from '../inbox-message';
import type { MessageTypeFilter } from '../management/message-management.service';
import { statusOf } from '../management/message-management.service';
import type { MessageRow } from '../store/cor-message.rows';
import { CorMessageStore } from '../store/cor-message.store';
import { COR_MESSAGE_TABLE } from '../store/cor-message.table';
import { INBOX_GROUP_TABLE } from '../store/inbox-group.table';
import { FAR_FUTURE } from '../store/next-retry';
import { PauseTableMissingError } from '../errors';
import { pauseDetails, pauseKey, type PausedType, type TypePauseOptions } from '../management/type-pause';
import { inboxNotifyChannel } from '../notify/notify-channel';
import { InboxPauseStatements } from '../store/inbox-pause.statements';
import { INBOX_PAUSE_TABLE } from '../store/inbox-pause.table';
import { supportsListenNotify } from '../store/inbox-sql.dialect';

export { MESSAGE_STATUSES };

/** One message row as the inbox's table holds it (times in epoch ms on the database clock). */
export type InboxRow = MessageRow;

/** Where the inbox's table is and how it counts: InboxModule's `tablePrefix` and `retry.maxRetries`. */
export interface InboxTableOptions {
  tablePrefix?: string;
  /**
   * The inbox's `retry.maxRetries` (a message is parked once its RETRIES reach it). Undefined: not
   * known, and the counts that depend on it are not guessed (see InboxStatus).
   */
  maxRetries?: number;
}

/** The inbox's depth as its table says it now. */
export interface InboxStatus {
  /**
   * The `maxRetries` these counts use, or null when none was given: then due, retrying, paused and
   * parked are null too (each depends on it: a message is parked once RETRIES >= maxRetries,
   * whatever NEXT_RETRY says), and `byRetries` is what tells them apart.
   */
  maxRetries: number | null;
  total: number;
  due: number | null;
  retrying: number | null;
  paused: number | null;
  parked: number | null;
  expired: number;
  /** Age in ms of the oldest due message (null when none is due, or maxRetries is unknown). */
  oldestDueAgeMs: number | null;
  /** Unexpired messages per RETRIES (failed attempts), fewest first: parked = RETRIES >= maxRetries. */
  byRetries: { retries: number; count: number }[];
}

/**
 * The inbox's table read and changed with the inbox's own statements (MessageManagement's): its
 * status read-model (depth, oldest due age, parked, per type, per RETRIES) and the operator's
 * commands on messages (retry now, pause, resume, delete), for the CLI and operators' tools that
 * run without the application. `open` answers null when the table does not exist.
 */
export class InboxTable {
  private constructor(
    private readonly store: CorMessageStore,
    readonly maxRetries: number | undefined,
    /** The paused types' table; undefined when it does not exist (the migration not run). */
    private readonly pauses: InboxPauseStatements | undefined,
    private readonly pauseTable: string,
  ) {}

  /** The inbox's table under `tablePrefix`, its time columns' layout read; null when there is none. */
  static async open(sql: SqlClient, options: InboxTableOptions = {}): Promise<InboxTable | null> {
    const prefix = options.tablePrefix ?? '';
    const schema = new SchemaManager(sql);
    if (!(await schema.tableExists(tableName(prefix, COR_MESSAGE_TABLE.name)))) return null;
    const store = new CorMessageStore(sql, prefix, options.maxRetries);
    await store.detectLayout();
    // Deletes also remove the messages' group rows when the inbox keeps groups.
    const groups = tableName(prefix, INBOX_GROUP_TABLE.name);
    if (await schema.tableExists(groups)) store.configure({ groupTable: groups });
    // A pause or resume tells the delivering nodes at once where they listen (PostgreSQL).
    const pauseTable = tableName(prefix, INBOX_PAUSE_TABLE.name);
    const channel = supportsListenNotify(sql.dialect) ? inboxNotifyChannel(store.table) : undefined;
    const pauses = (await schema.tableExists(pauseTable))
      ? new InboxPauseStatements(sql, pauseTable, channel)
      : undefined;
    return new InboxTable(store, options.maxRetries, pauses, pauseTable);
  }

  /** The table, prefix included. */
  get table(): string {
    return this.store.table;
  }

  /** The database clock, epoch ms: what every status is relative to. */
  now(): Promise<number> {
    return this.store.sql.nowMillis();
  }

  private get queries() {
    return this.store.management;
  }

  /** The counts at `now` (those that depend on maxRetries are null without it). */
  async status(now: number): Promise<InboxStatus> {
    const max = this.maxRetries;
    const counts = await this.queries.counts(now);
    const byRetries = await this.queries.countByRetries(now);
    const known = max !== undefined;
    const [oldestDue] = known ? await this.queries.list('due', 1, 0, now) : [];
    return {
      maxRetries: max ?? null,
      total: counts.total,
      due: known ? counts.due : null,
      retrying: known ? counts.retrying : null,
      paused: known ? counts.paused : null,
      parked: known ? counts.parked : null,
      expired: counts.expired,
      oldestDueAgeMs: oldestDue ? Math.max(0, now - oldestDue.inserted) : null,
      byRetries,
    };
  }

  /** The messages of each type the table holds (any status). */
  countByType(): Promise<
    { namespace: string | null; name: string; revision: string | null; count: number }[]
  > {
    return this.queries.countByType();
  }

  /** How many messages match `status` and `type` at `now` (undefined: any). */
  countMatching(
    status: MessageStatus | undefined,
    type: MessageTypeFilter | undefined,
    now: number,
  ): Promise<number> {
    return this.queries.countMatching(status, type, now);
  }

  /** One page of the messages in `status` and of `type`, in delivery order. */
  list(
    status: MessageStatus | undefined,
    limit: number,
    offset: number,
    now: number,
    type?: MessageTypeFilter,
  ): Promise<InboxRow[]> {
    return this.queries.list(status, limit, offset, now, type);
  }

  /** The message `id`, or undefined. */
  find(id: string): Promise<InboxRow | undefined> {
    return this.queries.find(id);
  }

  /** A row's status at `now` (needs maxRetries). */
  statusOf(row: InboxRow, now: number): MessageStatus {
    return statusOf(row, now, this.maxRetries ?? 5);
  }

  /** Whether the row carries the pause marker (a parked one may too). */
  isPaused(row: InboxRow): boolean {
    return row.nextRetry !== null && row.nextRetry >= FAR_FUTURE;
  }

  /** Due now; an exhausted message gets one more attempt. True when it changed. */
  async retryNow(id: string): Promise<boolean> {
    return (await this.queries.retryNow(id, undefined)) > 0;
  }

  async pause(id: string): Promise<boolean> {
    return (await this.queries.pause(id)) > 0;
  }

  /** True when it was paused and is not now. */
  async resume(id: string): Promise<boolean> {
    return (await this.queries.resume(id, undefined)) > 0;
  }

  /**
   * Pauses a message type on every delivering node (see MessageManagement.pauseType); true when
   * it was not paused before. Throws PauseTableMissingError without the pause table.
   */
  async pauseType(type: string, options: TypePauseOptions = {}): Promise<boolean> {
    const key = pauseKey(type);
    return this.pausesOrThrow().pause({ type: key, ...pauseDetails(options) });
  }

  /** Resumes a paused type; false when it was not paused. */
  async resumeType(type: string): Promise<boolean> {
    return this.pausesOrThrow().resume(pauseKey(type));
  }

  /** The types paused now (none without the pause table). */
  async pausedTypes(): Promise<PausedType[]> {
    const rows = (await this.pauses?.list()) ?? [];
    return rows.map((r) => ({
      type: r.type,
      pausedBy: r.pausedBy,
      pausedAt: new Date(r.pausedAt),
      ...(r.reason !== null ? { reason: r.reason } : {}),
    }));
  }

  /** The label a type is paused under (see pauseKey): `order` any namespace, `:order` none. */
  static pauseLabel(type: string): string {
    return pauseKey(type);
  }

  private pausesOrThrow(): InboxPauseStatements {
    if (!this.pauses) throw new PauseTableMissingError(this.pauseTable);
    return this.pauses;
  }

  /** Deletes the message (and its group row). True when there was one. */
  async delete(id: string): Promise<boolean> {
    return (await this.queries.delete(id)) > 0;
  }
}

/** What the inbox's table says right now, on the database clock. */
export interface InboxTableStatus {
  databaseNow: number;
  /** The table read, prefix included. */
  table: string;
  /** null: no table under the prefix. */
  inbox: InboxStatus | null;
}

/** The inbox's status read-model in one call: see InboxTable.status. Read-only. */
export async function readInboxStatus(
  sql: SqlClient,
  options: InboxTableOptions = {},
  /** The database clock (epoch ms) to read against: one clock for several read-models. Default: read now. */
  at?: { databaseNow: number },
): Promise<InboxTableStatus> {
  const inbox = await InboxTable.open(sql, options);
  const databaseNow = at?.databaseNow ?? (await sql.nowMillis());
  return { databaseNow, table: inboxTable(options), inbox: inbox && (await inbox.status(databaseNow)) };
}

/** The inbox's table under `tablePrefix` (for messages that name it). */
export function inboxTable(options: { tablePrefix?: string } = {}): string {
  return tableName(options.tablePrefix ?? '', COR_MESSAGE_TABLE.name);
}
