import { Inject, Injectable, Logger } from '@nestjs/common';
import { apiEncoding, decodePayload } from '../acceptor/message-codec';
import { InvalidManagementArgumentError, MessageNotFoundError, PauseTableMissingError } from '../errors';
import { InboxHandlerRegistry } from '../explorer/inbox-handler.registry';
import { InboxClock } from '../inbox.clock';
import { INBOX_OPTIONS } from '../inbox.tokens';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import { MESSAGE_STATUSES, type MessageCounts, type MessageInfo, type MessageStatus } from '../inbox-message';
import type { MessageRow } from '../store/cor-message.rows';
import { InboxConnection } from '../store/inbox-connection';
import { FAR_FUTURE } from '../store/next-retry';
import { InboxHistory } from '../history/inbox-history.service';
import type { HistoryEntry, HistoryOutcome, InboxStatsMinute } from '../history/history.types';
import type { InboxPauseStatements } from '../store/inbox-pause.statements';
import { pauseDetails, pauseKey, type PausedType, type TypePauseOptions } from './type-pause';

/**
 * The messages of one type: `name` always; `namespace` and `revision` each a value, null for
 * none, or left out for any.
 */
export interface MessageTypeFilter {
  name: string;
  namespace?: string | null;
  revision?: string | null;
}

export interface ListOptions {
  status?: MessageStatus;
  /** Only the messages of this type (filtered in the database). */
  type?: MessageTypeFilter;
  /** Default 100, at most 10,000. */
  limit?: number;
  offset?: number;
}

export interface TypeCount {
  type: { namespace?: string; name: string; revision?: string };
  count: number;
  /** false: no @InboxHandler on this node takes this type; these messages wait. */
  handled: boolean;
}

/** Admin operations on stored messages. Statuses are computed against the inbox clock. */
@Injectable()
export class MessageManagement {
  private readonly logger = new Logger(MessageManagement.name);

  constructor(
    private readonly connection: InboxConnection,
    private readonly clock: InboxClock,
    private readonly registry: InboxHandlerRegistry,
    @Inject(INBOX_OPTIONS) private readonly options: ResolvedInboxOptions,
    private readonly outcomes: InboxHistory,
  ) {}

  private get maxRetries(): number {
    return this.options.retry.maxRetries;
  }

  async list(options: ListOptions = {}): Promise<MessageInfo[]> {
    const { status, type, limit = 100, offset = 0 } = options;
    if (status !== undefined) this.assertStatus(status);
    if (type !== undefined) this.assertType(type);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
      throw new InvalidManagementArgumentError('limit', limit, 'must be an integer from 1 to 10000');
    }
    if (!Number.isInteger(offset) || offset < 0) {
      throw new InvalidManagementArgumentError('offset', offset, 'must be an integer ≥ 0');
    }
    const now = await this.clock.now();
    const rows = await this.connection.store.management.list(status, limit, offset, now, type);
    return rows.map((r) => this.info(r, now));
  }

  async get(id: string): Promise<MessageInfo | undefined> {
    this.assertId(id);
    const row = await this.connection.store.management.find(id);
    return row ? this.info(row, await this.clock.now()) : undefined;
  }

  /**
   * A message's payload as a handler would receive it (a JSON value, or a Buffer for 'binary'),
   * with its encoding; undefined when the message does not exist. For admin views (the dashboard).
   */
  async payload(id: string): Promise<{ encoding: string; payload: unknown } | undefined> {
    this.assertId(id);
    const row = await this.connection.store.management.find(id, true);
    if (!row) return undefined;
    return {
      encoding: apiEncoding(row.encoding) ?? row.encoding,
      payload: decodePayload(id, row.encoding, row.payload),
    };
  }

  /** Counts per status (and the total), in one query. */
  async count(): Promise<MessageCounts>;
  async count(status: MessageStatus): Promise<number>;
  async count(status?: MessageStatus): Promise<MessageCounts | number> {
    if (status !== undefined) this.assertStatus(status);
    const counts = await this.connection.store.management.counts(await this.clock.now());
    return status === undefined ? counts : counts[status];
  }

  /** How many messages `list` lists with no limit: of one status or all, of one type or all. */
  async countMatching(options: { status?: MessageStatus; type?: MessageTypeFilter } = {}): Promise<number> {
    const { status, type } = options;
    if (status !== undefined) this.assertStatus(status);
    if (type !== undefined) this.assertType(type);
    return this.connection.store.management.countMatching(status, type, await this.clock.now());
  }

  /** Stored messages per type, and whether a handler on this node takes the type. */
  async countByType(): Promise<TypeCount[]> {
    const rows = await this.connection.store.management.countByType();
    return rows.map((r) => {
      const type = {
        ...(r.namespace !== null ? { namespace: r.namespace } : {}),
        name: r.name,
        ...(r.revision !== null ? { revision: r.revision } : {}),
      };
      return { type, count: r.count, handled: this.registry.find(type) !== undefined };
    });
  }

  /** Messages no handler on this node takes. */
  async countUnhandled(): Promise<number> {
    return (await this.countByType()).filter((t) => !t.handled).reduce((sum, t) => sum + t.count, 0);
  }

  /** No delivery until `resume`. A delivery already running finishes; a failure of it does not unpause. */
  /**
   * What became of a message, attempt by attempt (oldest first, at most `limit`, default 100):
   * each delivery, each failure with its error, its parking or expiry. Needs the `history` option
   * (empty without it); the message itself may be gone (delivered, deleted, expired).
   */
  async history(id: string, options: { limit?: number } = {}): Promise<HistoryEntry[]> {
    this.assertId(id);
    return this.outcomes.ofMessage(id, this.assertLimit(options.limit ?? 100));
  }

  /**
   * The latest outcomes of one type (newest first, at most `limit`, default 100), of one
   * `outcome` only if given (e.g. 'failed': its latest errors). Needs the `history` option.
   */
  async recentAttempts(
    type: MessageTypeFilter,
    options: { limit?: number; outcome?: HistoryOutcome } = {},
  ): Promise<HistoryEntry[]> {
    this.assertType(type);
    const { outcome } = options;
    if (outcome !== undefined && !HISTORY_OUTCOMES.includes(outcome)) {
      throw new InvalidManagementArgumentError(
        'outcome',
        outcome,
        `must be one of ${HISTORY_OUTCOMES.join(', ')}`,
      );
    }
    return this.outcomes.ofType(type, this.assertLimit(options.limit ?? 100), outcome);
  }

  /**
   * The inbox's minutes over the last `minutes` (default 60, at most 1440) that have figures,
   * oldest first: delivered, failed and parked summed over the nodes, and the depth, parked count
   * and leader sampled at the cleanup tick. Needs the `stats` option (empty without it).
   */
  async stats(options: { minutes?: number } = {}): Promise<InboxStatsMinute[]> {
    const minutes = options.minutes ?? 60;
    if (!Number.isInteger(minutes) || minutes < 1 || minutes > 1440) {
      throw new InvalidManagementArgumentError('minutes', minutes, 'must be an integer from 1 to 1440');
    }
    return this.outcomes.statsSince(minutes);
  }

  async pause(id: string): Promise<void> {
    this.assertId(id);
    if (!(await this.connection.store.management.pause(id))) throw new MessageNotFoundError(id);
    this.logger.debug(`Paused message '${id}'`);
  }

  /**
   * Makes a paused message due now (parked if exhausted). Returns false (and changes nothing) if
   * it was not paused.
   */
  async resume(id: string): Promise<boolean> {
    this.assertId(id);
    if (await this.connection.store.management.resume(id, await this.clock.bindable())) {
      this.logger.debug(`Resumed message '${id}'`);
      return true;
    }
    if (!(await this.connection.store.management.find(id))) throw new MessageNotFoundError(id);
    return false;
  }

  /**
   * Due now, whatever its state (retrying, parked, paused). The retry count stays, but for an
   * exhausted (parked) message, which gets one more attempt: its count goes to maxRetries − 1,
   * so camunda-bpm-correlate sees it due too (see next-retry.ts).
   */
  async retryNow(id: string): Promise<void> {
    this.assertId(id);
    if (!(await this.connection.store.management.retryNow(id, await this.clock.bindable()))) {
      throw new MessageNotFoundError(id);
    }
    this.logger.debug(`Message '${id}' is due now`);
  }

  /** Sets the failed-attempt count (e.g. 0 to give a parked message its full retries again). */
  async setRetries(id: string, retries: number): Promise<void> {
    this.assertId(id);
    if (!Number.isInteger(retries) || retries < 0 || retries > 1_000_000) {
      throw new InvalidManagementArgumentError('retries', retries, 'must be an integer from 0 to 1000000');
    }
    if (!(await this.connection.store.management.setRetries(id, retries))) throw new MessageNotFoundError(id);
  }

  /** Deletes a message. Returns false if it did not exist. */
  async delete(id: string): Promise<boolean> {
    this.assertId(id);
    const deleted = (await this.connection.store.management.delete(id)) > 0;
    if (deleted) this.logger.debug(`Deleted message '${id}'`);
    return deleted;
  }

  /**
   * Pauses a message type on every node: claims leave its messages where they are (new ones
   * included) until `resumeType`. A delivery already running finishes. Each delivering node reads
   * the paused types at most once per `pollInterval`, so a node may still claim the type for up
   * to that long (on PostgreSQL with `notify`, the nodes read them again at once). `type`: a label
   * as listed (`shop:order` any revision, `shop:order@2`, `order` any namespace, `:order` none)
   * or a filter. Returns the pause as stored (a second pause of the same type replaces the first).
   */
  async pauseType(type: string | MessageTypeFilter, options: TypePauseOptions = {}): Promise<PausedType> {
    const key = pauseKey(type);
    const { actor, reason } = pauseDetails(options);
    const fresh = await this.pauses().pause({ type: key, actor, reason });
    this.logger.log(
      `${actor} paused message type '${key}' in ${this.connection.store.table}${reason ? ` (${reason})` : ''}` +
        (fresh ? '' : ' (was paused already: the pause is replaced)'),
    );
    const paused = (await this.pausedTypes()).find((p) => p.type === key);
    return paused ?? { type: key, pausedBy: actor, pausedAt: new Date(), ...(reason ? { reason } : {}) };
  }

  /** Resumes a paused type (see pauseType): false (and nothing changed) when it was not paused. */
  async resumeType(
    type: string | MessageTypeFilter,
    options: Pick<TypePauseOptions, 'actor'> = {},
  ): Promise<boolean> {
    const key = pauseKey(type);
    const { actor } = pauseDetails({ actor: options?.actor });
    const resumed = await this.pauses().resume(key);
    if (resumed) this.logger.log(`${actor} resumed message type '${key}' in ${this.connection.store.table}`);
    return resumed;
  }

  /** The types paused now, by label; empty when the inbox has no pause table. */
  async pausedTypes(): Promise<PausedType[]> {
    const rows = (await this.connection.pauses?.list()) ?? [];
    return rows.map((r) => ({
      type: r.type,
      pausedBy: r.pausedBy,
      pausedAt: new Date(r.pausedAt),
      ...(r.reason !== null ? { reason: r.reason } : {}),
    }));
  }

  private pauses(): InboxPauseStatements {
    const pauses = this.connection.pauses;
    if (!pauses) throw new PauseTableMissingError(this.connection.pauseTable);
    return pauses;
  }

  private info(row: MessageRow, now: number): MessageInfo {
    const status = statusOf(row, now, this.maxRetries);
    const scheduled = row.nextRetry !== null && row.nextRetry < FAR_FUTURE && row.nextRetry > now;
    return {
      id: row.id,
      type: {
        ...(row.namespace !== null ? { namespace: row.namespace } : {}),
        name: row.name,
        ...(row.revision !== null ? { revision: row.revision } : {}),
      },
      encoding: apiEncoding(row.encoding) ?? row.encoding,
      status,
      inserted: new Date(row.inserted),
      ...(row.ttl !== null ? { ttl: row.ttl } : {}),
      ...(row.expiration !== null ? { expiration: new Date(row.expiration) } : {}),
      retries: row.retries,
      ...(scheduled ? { nextRetry: new Date(row.nextRetry!) } : {}),
      ...(row.error !== null ? { error: row.error } : {}),
    };
  }

  private assertLimit(limit: unknown): number {
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 10_000) {
      throw new InvalidManagementArgumentError('limit', limit, 'must be an integer from 1 to 10000');
    }
    return limit;
  }

  private assertStatus(status: unknown): void {
    if (!MESSAGE_STATUSES.includes(status as MessageStatus)) {
      throw new InvalidManagementArgumentError(
        'status',
        status,
        `must be one of ${MESSAGE_STATUSES.join(', ')}`,
      );
    }
  }

  private assertType(type: unknown): void {
    const t = type as Partial<Record<keyof MessageTypeFilter, unknown>> | null;
    const optional = (v: unknown) => v === undefined || v === null || typeof v === 'string';
    if (
      typeof t !== 'object' ||
      t === null ||
      typeof t.name !== 'string' ||
      t.name === '' ||
      !optional(t.namespace) ||
      !optional(t.revision)
    ) {
      throw new InvalidManagementArgumentError(
        'type',
        type,
        'must be { name: a non-empty string, namespace?: string | null, revision?: string | null }',
      );
    }
  }

  private assertId(id: unknown): void {
    if (typeof id !== 'string' || id === '') {
      throw new InvalidManagementArgumentError('id', id, 'must be a non-empty string');
    }
  }
}

/** The same rules as the SQL conditions in CorMessageManagement (see next-retry.ts). */
export function statusOf(row: MessageRow, now: number, maxRetries: number): MessageStatus {
  if (row.expiration !== null && row.expiration <= now) return 'expired';
  // Exhausted whatever NEXT_RETRY says (camunda-bpm-correlate's MAX_RETRIES_REACHED).
  if (row.retries >= Math.max(1, maxRetries)) return 'parked';
  if (row.nextRetry !== null && row.nextRetry >= FAR_FUTURE) return 'paused';
  if (row.nextRetry === null || row.nextRetry <= now) return 'due';
  return 'retrying';
}

const HISTORY_OUTCOMES: readonly HistoryOutcome[] = ['delivered', 'failed', 'parked', 'expired'];
