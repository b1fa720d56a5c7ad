import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { isDuplicateKeyError, parseDuration, statement, type Duration } from '@holdfast/core/kit';
import {
  callerRunner,
  joinTransaction,
  type AcceptOptions,
  type CallerTransaction,
} from '../accept-tx/caller-transaction';
import type { CorMessageAccept } from '../store/cor-message.accept';
import { FAR_FUTURE } from '../store/next-retry';
import { v7 as uuidv7 } from 'uuid';
import { InvalidMessageError } from '../errors';
import { InboxDelivery } from '../delivery/inbox-delivery.service';
import { InboxClock } from '../inbox.clock';
import { INBOX_OPTIONS } from '../inbox.tokens';
import type { AcceptMessage, AcceptResult } from '../inbox-message';
import { InboxMetrics } from '../metrics/inbox.metrics';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import { InboxConnection } from '../store/inbox-connection';
import { AcceptTracing } from '../tracing/accept-tracing';
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
import { MAX_PRIORITY, MIN_PRIORITY } from '../store/cor-message.priority';
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
  /** The `send` span of each call, and the accepting context it gives each message. */
  private readonly tracing: AcceptTracing;

  constructor(
    private readonly connection: InboxConnection,
    private readonly clock: InboxClock,
    private readonly metrics: InboxMetrics,
    @Inject(INBOX_OPTIONS) private readonly options: ResolvedInboxOptions,
    /** This node's delivery loop, woken by an accept instead of waiting for its next poll. */
    @Optional() private readonly delivery?: InboxDelivery,
  ) {
    if (options.defaultTtl !== undefined) this.defaultTtl = defaultTtlToIso(options.defaultTtl);
    this.tracing = new AcceptTracing(
      () => connection.store.table,
      () => connection.store.on.traceContext,
    );
  }

  /**
   * Stores one message. With `options.manager` (or `queryRunner`), or inside a transaction of
   * `@nestjs-cls/transactional`, it is written in that transaction: it exists only if the
   * transaction commits, and the delivery is woken after the commit. Each call is one `send`
   * span (see AcceptTracing), whose context the message keeps with `traceContext` on.
   */
  async accept<T>(message: AcceptMessage<T>, options?: AcceptOptions): Promise<AcceptResult> {
    const row = this.toRow(message);
    return this.tracing.send([row.id], (carried) => {
      if (carried !== undefined) row.traceContext = carried;
      return this.acceptRow(row, options);
    });
  }

  /** accept, inside its span. */
  private async acceptRow(row: NewMessageRow, options: AcceptOptions | undefined): Promise<AcceptResult> {
    const joining = this.transactionOf(options);
    if (joining) {
      const tx = await joining;
      const now = await this.clock.bindable();
      const store = this.connection.accept.through(tx.sql);
      if (row.onExisting && (await store.replace(row, row.onExisting, now))) {
        this.countIn(tx, 1, 0);
        return { id: row.id, accepted: true, replaced: true };
      }
      const inserted = await this.insertInTransaction(tx, [row], now);
      // An id stored since the replace found none: replaced now.
      const replaced =
        !inserted.length && !!row.onExisting && (await store.replace(row, row.onExisting, now));
      this.countIn(tx, inserted.length || Number(replaced), Number(!inserted.length && !replaced));
      return replaced
        ? { id: row.id, accepted: true, replaced }
        : { id: row.id, accepted: inserted.length === 1 };
    }
    if (row.onExisting) return this.acceptReplacing(row, row.onExisting);
    const inserted = await this.insertOne(row);
    this.count(inserted ? 1 : 0, inserted ? 0 : 1);
    return { id: row.id, accepted: inserted };
  }

  /**
   * One message with `onExisting` 'replace'/'debounce' on its own: the replace first (one UPDATE
   * when the id exists, the usual case of a debounce), else the insert; an id stored between the
   * two is replaced then.
   */
  private async acceptReplacing(row: NewMessageRow, mode: 'replace' | 'debounce'): Promise<AcceptResult> {
    const replace = async () => {
      const now = await this.clock.bindable();
      return this.metrics.retry('accept', () => this.connection.accept.replace(row, mode, now));
    };
    let replaced = await replace();
    const inserted = !replaced && (await this.insertOne(row));
    if (!replaced && !inserted) replaced = await replace();
    this.count(Number(replaced || inserted), Number(!replaced && !inserted));
    return replaced ? { id: row.id, accepted: true, replaced } : { id: row.id, accepted: inserted };
  }

  /**
   * Accepts many messages: one multi-row INSERT per `acceptChunkSize` rows. Results keep the input
   * order. `options`: in the caller's transaction, as `accept`.
   */
  async acceptAll<T>(
    messages: readonly AcceptMessage<T>[],
    options?: AcceptOptions,
  ): Promise<AcceptResult[]> {
    if (!Array.isArray(messages)) throw new InvalidMessageError('messages', messages, 'must be an array');
    const rows = messages.map((m, i) => this.toRow(m, i));
    return this.tracing.send(
      rows.map((r) => r.id),
      (carried) => {
        if (carried !== undefined) for (const row of rows) row.traceContext = carried;
        return this.acceptRows(rows, options);
      },
    );
  }

  /** acceptAll, inside its span. */
  private async acceptRows(
    rows: readonly NewMessageRow[],
    options: AcceptOptions | undefined,
  ): Promise<AcceptResult[]> {
    const accepted = new Map<string, boolean>();
    const fresh: NewMessageRow[] = [];
    for (const row of rows) {
      if (accepted.has(row.id)) continue; // the same id twice in one call: the first one counts
      accepted.set(row.id, false);
      fresh.push(row);
    }
    if (fresh.some((r) => r.onExisting)) return this.acceptAllReplacing(rows, fresh, options);
    return this.insertAll(rows, fresh, accepted, options);
  }

  /** acceptAll's inserts: `fresh` (the rows without a repeated id) into `accepted`, results for `rows`. */
  private async insertAll(
    rows: readonly NewMessageRow[],
    fresh: readonly NewMessageRow[],
    accepted: Map<string, boolean>,
    options?: AcceptOptions,
  ): Promise<AcceptResult[]> {
    const joining = this.transactionOf(options);
    if (joining) {
      const tx = await joining;
      // One connection, the caller's: the chunks one after the other, INSERTED read once.
      const now =
        fresh.length > this.options.acceptChunkSize
          ? ((await this.clock.bindable()) ?? (await tx.sql.nowMillis()))
          : await this.clock.bindable();
      for (const id of await this.insertInTransaction(tx, fresh, now)) accepted.set(id, true);
      const results = this.results(rows, accepted);
      const n = results.filter((r) => r.accepted).length;
      this.countIn(tx, n, results.length - n);
      return results;
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
    const results = this.results(rows, accepted);
    const n = results.filter((r) => r.accepted).length;
    this.count(n, results.length - n);
    return results;
  }

  private results(
    rows: readonly NewMessageRow[],
    accepted: ReadonlyMap<string, boolean>,
    replaced?: ReadonlySet<string>,
  ): AcceptResult[] {
    const results: AcceptResult[] = [];
    const reported = new Set<string>();
    for (const row of rows) {
      const first = !reported.has(row.id);
      reported.add(row.id);
      if (first && replaced?.has(row.id)) results.push({ id: row.id, accepted: true, replaced: true });
      else results.push({ id: row.id, accepted: first && accepted.get(row.id) === true });
    }
    return results;
  }

  /**
   * acceptAll with messages to replace or debounce: those are replaced first, one UPDATE each
   * (in the caller's transaction when given); the others, and those whose id did not exist, are
   * inserted as usual (one call of acceptAll without them); an id stored meanwhile by someone
   * else is replaced then.
   */
  private async acceptAllReplacing(
    rows: readonly NewMessageRow[],
    fresh: readonly NewMessageRow[],
    options?: AcceptOptions,
  ): Promise<AcceptResult[]> {
    const joining = this.transactionOf(options);
    const tx = joining ? await joining : undefined;
    const store = tx ? this.connection.accept.through(tx.sql) : this.connection.accept;
    const now = await this.clock.bindable();
    const replaced = new Set<string>();
    const replaceAll = async (todo: readonly NewMessageRow[]) => {
      for (const row of todo) {
        const mode = row.onExisting!;
        const done = tx
          ? await store.replace(row, mode, now)
          : await this.metrics.retry('accept', () => store.replace(row, mode, now));
        if (done) replaced.add(row.id);
      }
    };
    await replaceAll(fresh.filter((r) => r.onExisting));
    const rest = fresh.filter((r) => !replaced.has(r.id));
    const accepted = new Map<string, boolean>(rest.map((r) => [r.id, false]));
    if (rest.length) await this.insertAll(rest, rest, accepted, options);
    await replaceAll(fresh.filter((r) => r.onExisting && !replaced.has(r.id) && !accepted.get(r.id)));
    if (replaced.size) {
      if (tx) this.countIn(tx, replaced.size, 0);
      else this.count(replaced.size, 0);
    }
    return this.results(rows, accepted, replaced);
  }

  /**
   * The caller's open transaction (see callerRunner), or undefined, found synchronously: an
   * accept without one takes the same path (and the same promise hops) as before transactions.
   */
  private transactionOf(options: AcceptOptions | undefined): Promise<CallerTransaction> | undefined {
    const sql = this.connection.acceptClient;
    const inbox = { dataSource: sql.dataSource, dialect: sql.dialect };
    const runner = callerRunner(options, inbox);
    return runner ? joinTransaction(runner, inbox) : undefined;
  }

  /**
   * Inserts the rows that do not exist yet in the caller's transaction; returns the ids stored.
   * As outside a transaction, the common case (no id exists yet) is one INSERT per chunk; after a
   * duplicate, the ids that exist are read and the others inserted. A duplicate must not end the
   * caller's transaction: on PostgreSQL a failed statement aborts the whole transaction, so each
   * insert runs under a savepoint there; MariaDB and SQLite undo only the failed statement.
   * Nothing is retried: a deadlock or a lock wait timeout is the caller's transaction's to handle.
   */
  private async insertInTransaction(
    tx: CallerTransaction,
    rows: readonly NewMessageRow[],
    now: Now,
  ): Promise<string[]> {
    const store = this.connection.accept.through(tx.sql);
    const savepoints = tx.sql.dialect.name === 'postgres';
    const size = this.options.acceptChunkSize;
    const stored: string[] = [];
    for (let i = 0; i < rows.length; i += size) {
      const chunk = rows.slice(i, i + size);
      if (await this.tryInsert(tx, store, chunk, now, savepoints)) {
        stored.push(...chunk.map((r) => r.id));
        continue;
      }
      const existing = await store.existingIds(chunk.map((r) => r.id));
      const todo = chunk.filter((r) => !existing.has(r.id));
      if (!todo.length) continue;
      if (await this.tryInsert(tx, store, todo, now, savepoints)) {
        stored.push(...todo.map((r) => r.id));
        continue;
      }
      // An id stored meanwhile by a transaction this one's snapshot does not see: row by row.
      for (const row of todo)
        if (await this.tryInsert(tx, store, [row], now, savepoints)) stored.push(row.id);
    }
    return stored;
  }

  /** true: inserted; false: a duplicate id (the caller's transaction goes on). */
  private async tryInsert(
    tx: CallerTransaction,
    store: CorMessageAccept,
    rows: NewMessageRow[],
    now: Now,
    savepoint: boolean,
  ): Promise<boolean> {
    if (savepoint) await tx.sql.execute(statement('SAVEPOINT holdfast_accept'));
    try {
      await store.insert(rows, now);
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      if (savepoint) await tx.sql.execute(statement('ROLLBACK TO SAVEPOINT holdfast_accept'));
      return false;
    }
    if (savepoint) await tx.sql.execute(statement('RELEASE SAVEPOINT holdfast_accept'));
    return true;
  }

  /** count(), with the wake-up after the caller's commit. */
  private countIn(tx: CallerTransaction, accepted: number, duplicates: number): void {
    if (accepted) {
      tx.afterCommit(() => {
        this.metrics.accepted.add(accepted);
        this.delivery?.wake();
      });
    }
    if (duplicates) this.metrics.duplicates.add(duplicates);
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
    const { id = uuidv7(), type, payload, encoding = 'json', ttl, expiration, deliverAt, delay } = message;
    const { priority, onExisting } = message;
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
    const schedule = this.scheduleOf(deliverAt, delay, bad);
    if (schedule.notBefore !== undefined && expirationMs !== null && schedule.notBefore >= expirationMs)
      throw bad(
        'deliverAt',
        deliverAt,
        `is not before the message's expiration (${new Date(expirationMs).toISOString()})`,
      );
    if (schedule.delayMs !== undefined && parsedTtl && schedule.delayMs >= parsedTtl.ms)
      throw bad('delay', delay, `is not shorter than the message's ttl (${parsedTtl.iso})`);

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
    if (schedule.notBefore !== undefined) row.notBefore = schedule.notBefore;
    if (schedule.delayMs !== undefined) row.delayMs = schedule.delayMs;
    if (this.options.groupBy) row.group = this.groupOf(row, bad);
    if (priority !== undefined && priority !== null) row.priority = this.priorityOf(priority, bad);
    if (onExisting !== undefined && onExisting !== null && onExisting !== 'keep') {
      if (onExisting !== 'replace' && onExisting !== 'debounce')
        throw bad('onExisting', onExisting, "must be 'keep', 'replace' or 'debounce'");
      row.onExisting = onExisting;
    }
    return row;
  }

  /** `priority`: an integer from MIN_PRIORITY to MAX_PRIORITY, and only with the option `priorities`. */
  private priorityOf(
    priority: unknown,
    bad: (field: string, value: unknown, reason: string) => InvalidMessageError,
  ): number {
    if (!this.options.priorities)
      throw bad(
        'priority',
        priority,
        "priorities are off in this inbox: set the option 'priorities: true' (it needs the PRIORITY column)",
      );
    if (
      typeof priority !== 'number' ||
      !Number.isInteger(priority) ||
      priority < MIN_PRIORITY ||
      priority > MAX_PRIORITY
    )
      throw bad(
        'priority',
        priority,
        `must be an integer from ${MIN_PRIORITY} to ${MAX_PRIORITY} (lower first)`,
      );
    return priority;
  }

  /**
   * `deliverAt` / `delay`: the seed's NEXT_RETRY ("not before"). A time the column cannot hold,
   * or the pause marker's, is refused.
   */
  private scheduleOf(
    deliverAt: unknown,
    delay: unknown,
    bad: (field: string, value: unknown, reason: string) => InvalidMessageError,
  ): { notBefore?: number; delayMs?: number } {
    const hasAt = deliverAt !== undefined && deliverAt !== null;
    const hasDelay = delay !== undefined && delay !== null;
    if (hasAt && hasDelay) throw bad('delay', delay, "give either 'deliverAt' or 'delay', not both");
    // The last time NEXT_RETRY holds below the pause marker (a MySQL/MariaDB TIMESTAMP ends in 2038).
    const latest = Math.min(FAR_FUTURE - 1, this.connection.store.on.t.maxMillis);
    if (hasAt) {
      if (!(deliverAt instanceof Date) || Number.isNaN(deliverAt.getTime()))
        throw bad('deliverAt', deliverAt, 'must be a valid Date');
      if (deliverAt.getTime() > latest)
        throw bad(
          'deliverAt',
          deliverAt,
          `is later than ${new Date(latest).toISOString()}, the latest NEXT_RETRY holds`,
        );
      return { notBefore: deliverAt.getTime() };
    }
    if (hasDelay) {
      let ms: number;
      try {
        ms = parseDuration(delay as Duration, 'delay');
      } catch {
        throw bad(
          'delay',
          delay,
          "must be a duration of 0 or more: milliseconds, '30s', '5m' or ISO-8601 'PT5M'",
        );
      }
      if (ms > latest - Date.now())
        throw bad(
          'delay',
          delay,
          `ends later than ${new Date(latest).toISOString()}, the latest NEXT_RETRY holds`,
        );
      return ms > 0 ? { delayMs: Math.ceil(ms) } : {};
    }
    return {};
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
