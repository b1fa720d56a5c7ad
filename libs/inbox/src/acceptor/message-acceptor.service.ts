import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { isDuplicateKeyError } from '@holdfast/core/kit';
import { v7 as uuidv7 } from 'uuid';
import { InvalidMessageError } from '../errors';
import { InboxDelivery } from '../delivery/inbox-delivery.service';
import { InboxClock } from '../inbox.clock';
import { INBOX_OPTIONS } from '../inbox.tokens';
import type { AcceptMessage, AcceptResult } from '../inbox-message';
import { InboxMetrics } from '../metrics/inbox.metrics';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import { InboxConnection } from '../store/inbox-connection';
import { type NewMessageRow, type Now } from '../store/cor-message.rows';

/** camunda-bpm-correlate's TTL_DURATION is VARCHAR(32): a longer ISO text would not fit a seed table. */
const TTL_COLUMN_LENGTH = 32;

/** Chunks of one acceptAll inserted at the same time (each on its own pooled connection). */
const ACCEPT_PARALLELISM = 4;
import {
  MAX_ID_LENGTH,
  MAX_TYPE_NAME_LENGTH,
  MAX_TYPE_NAMESPACE_LENGTH,
  MAX_TYPE_REVISION_LENGTH,
} from '../store/cor-message.table';
import { MAX_GROUP_KEY_LENGTH } from '../store/inbox-group.table';
import {
  apiEncoding,
  decodePayload,
  encodePayload,
  PAYLOAD_ENCODINGS,
  storedEncoding,
} from './message-codec';
import { defaultTtlToIso, parseIsoTtl, type ParsedTtl } from './ttl';

/**
 * Stores incoming messages for later delivery. Every message of a call is validated and encoded
 * before anything is written, so a bad one stores nothing. An id that already exists is not
 * touched and comes back `accepted: false`.
 */
@Injectable()
export class MessageAcceptor {
  private readonly logger = new Logger(MessageAcceptor.name);
  private readonly defaultTtl?: ParsedTtl;

  constructor(
    private readonly connection: InboxConnection,
    private readonly clock: InboxClock,
    private readonly metrics: InboxMetrics,
    @Inject(INBOX_OPTIONS) private readonly options: ResolvedInboxOptions,
    /** This node's delivery loop, woken by an accept instead of waiting for its next poll. */
    @Optional() private readonly delivery?: InboxDelivery,
  ) {
    if (options.defaultTtl !== undefined) this.defaultTtl = defaultTtlToIso(options.defaultTtl);
  }

  async accept<T>(message: AcceptMessage<T>): Promise<AcceptResult> {
    const row = this.toRow(message);
    const inserted = await this.insertOne(row);
    this.count(inserted ? 1 : 0, inserted ? 0 : 1);
    return { id: row.id, accepted: inserted };
  }

  /** Accepts many messages: one multi-row INSERT per `acceptChunkSize` rows. Results keep the input order. */
  async acceptAll<T>(messages: readonly AcceptMessage<T>[]): Promise<AcceptResult[]> {
    if (!Array.isArray(messages)) throw new InvalidMessageError('messages', messages, 'must be an array');
    const rows = messages.map((m, i) => this.toRow(m, i));
    const accepted = new Map<string, boolean>();
    const fresh: NewMessageRow[] = [];
    for (const row of rows) {
      if (accepted.has(row.id)) continue; // the same id twice in one call: the first one counts
      accepted.set(row.id, false);
      fresh.push(row);
    }
    // One INSERTED for the whole call (the database clock, read once): the chunks can then go
    // in parallel and the rows still sort in the caller's order (INSERTED, then the v7 ids).
    const now =
      fresh.length > this.options.acceptChunkSize ? await this.clock.now() : await this.clock.bindable();
    const size = this.options.acceptChunkSize;
    const chunks: NewMessageRow[][] = [];
    for (let i = 0; i < fresh.length; i += size) chunks.push(fresh.slice(i, i + size));
    let next = 0;
    let failure: { error: unknown } | undefined;
    await Promise.all(
      Array.from({ length: Math.min(ACCEPT_PARALLELISM, chunks.length) }, async () => {
        // After a failure no new chunk starts; the ones running finish before the error is thrown.
        while (next < chunks.length && !failure) {
          try {
            for (const id of await this.insertChunk(chunks[next++], now)) accepted.set(id, true);
          } catch (error) {
            failure ??= { error };
          }
        }
      }),
    );
    if (failure) throw failure.error;
    const results: AcceptResult[] = [];
    const reported = new Set<string>();
    for (const row of rows) {
      const first = !reported.has(row.id);
      reported.add(row.id);
      results.push({ id: row.id, accepted: first && accepted.get(row.id) === true });
    }
    const n = results.filter((r) => r.accepted).length;
    this.count(n, results.length - n);
    return results;
  }

  private count(accepted: number, duplicates: number): void {
    if (accepted) {
      this.metrics.accepted.add(accepted);
      this.delivery?.wake();
    }
    if (duplicates) this.metrics.duplicates.add(duplicates);
  }

  /** Inserts the rows that do not exist yet; returns the ids this call stored. */
  private async insertChunk(chunk: NewMessageRow[], now: Now): Promise<string[]> {
    try {
      // The common case (no id exists yet) costs one statement.
      await this.metrics.retry('accept', () => this.connection.accept.insert(chunk, now));
      return chunk.map((r) => r.id);
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      this.logger.debug(`Some ids of a chunk exist already; inserting the others`);
    }
    const existing = await this.metrics.retry('accept', () =>
      this.connection.accept.existingIds(chunk.map((r) => r.id)),
    );
    const todo = chunk.filter((r) => !existing.has(r.id));
    if (!todo.length) return [];
    try {
      await this.metrics.retry('accept', () => this.connection.accept.insert(todo, now));
      return todo.map((r) => r.id);
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      // Someone stored one of these ids in the meantime: settle it row by row, which tells
      // exactly which ids were ours.
      const ids: string[] = [];
      for (const row of todo) if (await this.insertOne(row)) ids.push(row.id);
      return ids;
    }
  }

  /** true: stored; false: the id existed. A failure for any other reason is rethrown. */
  private async insertOne(row: NewMessageRow): Promise<boolean> {
    try {
      // A deadlock victim is retried (core's bounded retry); a retry that then finds the id
      // stored by someone else reports a duplicate, so the call stays idempotent by id.
      const now = await this.clock.bindable();
      await this.metrics.retry('accept', () => this.connection.accept.insert([row], now));
      return true;
    } catch (error) {
      // A plain INSERT (not ON CONFLICT…) because MariaDB's affected-row count cannot tell an
      // ignored duplicate from an insert: the id is the only unique key, so a duplicate-key
      // error means the message exists already.
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }

  private toRow(message: AcceptMessage, index?: number): NewMessageRow {
    const bad = (field: string, value: unknown, reason: string) =>
      new InvalidMessageError(field, value, reason, index);
    if (message === null || typeof message !== 'object') throw bad('message', message, 'must be an object');
    const { id = uuidv7(), type, payload, encoding = 'json', ttl, expiration } = message;
    if (typeof id !== 'string' || id.trim() === '') throw bad('id', id, 'must be a non-empty string');
    if (id.length > MAX_ID_LENGTH)
      throw bad('id', id, `is ${id.length} characters long; at most ${MAX_ID_LENGTH} fit`);
    if (type === null || typeof type !== 'object')
      throw bad('type', type, 'must be an object { namespace?, name, revision? }');
    const text = (field: string, value: unknown, max: number, required: boolean): string | null => {
      if (value === undefined || value === null) {
        if (required) throw bad(field, value, 'is required');
        return null;
      }
      if (typeof value !== 'string' || value.trim() === '')
        throw bad(field, value, 'must be a non-empty string');
      if (value.length > max)
        throw bad(field, value, `is ${value.length} characters long; at most ${max} fit`);
      return value;
    };
    const name = text('type.name', type.name, MAX_TYPE_NAME_LENGTH, true) as string;
    const namespace = text('type.namespace', type.namespace, MAX_TYPE_NAMESPACE_LENGTH, false);
    const revision = text('type.revision', type.revision, MAX_TYPE_REVISION_LENGTH, false);
    if (!PAYLOAD_ENCODINGS.includes(encoding))
      throw bad('encoding', encoding, `must be one of ${PAYLOAD_ENCODINGS.join(', ')}`);

    let parsedTtl: ParsedTtl | undefined;
    let expirationMs: number | null = null;
    if (ttl !== undefined && ttl !== null) {
      parsedTtl = parseIsoTtl(ttl);
      if (!parsedTtl) throw bad('ttl', ttl, "must be a positive ISO-8601 duration such as 'PT10M' or 'P1D'");
      if (parsedTtl.iso.length > TTL_COLUMN_LENGTH) {
        throw bad(
          'ttl',
          ttl,
          `is longer than ${TTL_COLUMN_LENGTH} characters (the seed's TTL_DURATION column)`,
        );
      }
    }
    if (expiration !== undefined && expiration !== null) {
      if (parsedTtl) throw bad('expiration', expiration, "give either 'ttl' or 'expiration', not both");
      if (!(expiration instanceof Date) || Number.isNaN(expiration.getTime())) {
        throw bad('expiration', expiration, 'must be a valid Date');
      }
      expirationMs = expiration.getTime();
    }
    if (!parsedTtl && expirationMs === null) parsedTtl = this.defaultTtl;

    const row: NewMessageRow = {
      id,
      encoding: storedEncoding(encoding),
      namespace,
      name,
      revision,
      payload: encodePayload(payload, encoding, index),
      ttl: parsedTtl?.iso ?? null,
      ttlMs: parsedTtl?.ms ?? null,
      expiration: expirationMs,
    };
    if (this.options.groupBy) row.group = this.groupOf(row, bad);
    return row;
  }

  /**
   * The message's group, from `groupBy` over the message as its handler will see it (the payload
   * decoded from what is stored; `inserted` is the local time, the database's is not known yet).
   */
  private groupOf(
    row: NewMessageRow,
    bad: (field: string, value: unknown, reason: string) => InvalidMessageError,
  ): string {
    let key: unknown;
    try {
      key = this.options.groupBy!({
        id: row.id,
        type: {
          ...(row.namespace !== null ? { namespace: row.namespace } : {}),
          name: row.name,
          ...(row.revision !== null ? { revision: row.revision } : {}),
        },
        encoding: apiEncoding(row.encoding)!,
        payload: decodePayload(row.id, row.encoding, row.payload),
        inserted: new Date(),
        ...(row.ttl !== null ? { ttl: row.ttl } : {}),
        ...(row.expiration !== null ? { expiration: new Date(row.expiration) } : {}),
        retries: 0,
      });
    } catch (error) {
      throw bad('groupBy', row.id, `groupBy threw: ${(error as Error)?.message ?? String(error)}`);
    }
    const group = String(key);
    if (group.length > MAX_GROUP_KEY_LENGTH)
      throw bad('groupBy', group, `is ${group.length} characters long; at most ${MAX_GROUP_KEY_LENGTH} fit`);
    return group;
  }
}
