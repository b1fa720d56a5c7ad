import { Inject, Injectable, Optional } from '@nestjs/common';
import {
  callerRunner,
  joinTransaction,
  type AcceptOptions,
  type CallerTransaction,
} from '../accept-tx/caller-transaction';
import { InvalidMessageError } from '../errors';
import { InboxDelivery } from '../delivery/inbox-delivery.service';
import { InboxClock } from '../inbox.clock';
import { INBOX_OPTIONS } from '../inbox.tokens';
import type { AcceptMessage, AcceptResult } from '../inbox-message';
import { InboxMetrics } from '../metrics/inbox.metrics';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import type { NewMessageRow } from '../store/cor-message.rows';
import { InboxConnection } from '../store/inbox-connection';
import { AcceptTracing } from '../tracing/accept-tracing';
import { AcceptCounter } from './accept-counter';
import { acceptResults } from './accept-results';
import { inSendSpan } from './accept-span';
import { MessageInserter } from './message-inserter';
import { MessageReplacer } from './message-replacer';
import { MessageRowBuilder } from './message-row-builder';

/**
 * Stores incoming messages for later delivery. Every message of a call is validated and encoded
 * before anything is written (MessageRowBuilder), so a bad one stores nothing. An id that already
 * exists is not touched and comes back `accepted: false`, unless the message asks to replace or
 * debounce it (MessageReplacer). Each call is one `send` span (see AcceptTracing).
 */
@Injectable()
export class MessageAcceptor {
  private readonly rows: MessageRowBuilder;
  /** The `send` span of each call, and the accepting context it gives each message. */
  private readonly tracing: AcceptTracing;
  private readonly counter: AcceptCounter;
  private readonly inserter: MessageInserter;
  private readonly replacer: MessageReplacer;

  constructor(
    private readonly connection: InboxConnection,
    private readonly clock: InboxClock,
    metrics: InboxMetrics,
    @Inject(INBOX_OPTIONS) private readonly options: ResolvedInboxOptions,
    /** This node's delivery loop, woken by an accept instead of waiting for its next poll. */
    @Optional() delivery?: InboxDelivery,
  ) {
    this.rows = new MessageRowBuilder(options, () => connection.store.on.t.maxMillis);
    this.tracing = new AcceptTracing(
      () => connection.store.table,
      () => connection.store.on.traceContext,
    );
    this.counter = new AcceptCounter(metrics, delivery);
    this.inserter = new MessageInserter(connection, clock, metrics, options.acceptChunkSize);
    this.replacer = new MessageReplacer(connection, clock, metrics, this.inserter, this.counter);
  }

  /**
   * Stores one message. With `options.manager` (or `queryRunner`), or inside a transaction of
   * `@nestjs-cls/transactional`, it is written in that transaction: it exists only if the
   * transaction commits, and the delivery is woken after the commit. Each call is one `send`
   * span (see AcceptTracing), whose context the message keeps with `traceContext` on.
   */
  async accept<T>(message: AcceptMessage<T>, options?: AcceptOptions): Promise<AcceptResult> {
    const row = this.rows.toRow(message);
    return inSendSpan(this.tracing, [row], () => this.acceptRow(row, options));
  }

  /** accept, inside its span. */
  private async acceptRow(row: NewMessageRow, options: AcceptOptions | undefined): Promise<AcceptResult> {
    const joining = this.transactionOf(options);
    if (joining) return this.acceptInTransaction(await joining, row);
    if (row.onExisting) return this.replacer.acceptOne(row, row.onExisting);
    const inserted = await this.inserter.insertOne(row);
    this.counter.count(inserted ? 1 : 0, inserted ? 0 : 1);
    return { id: row.id, accepted: inserted };
  }

  /** accept in the caller's transaction: the replace first when asked, else the insert. */
  private async acceptInTransaction(tx: CallerTransaction, row: NewMessageRow): Promise<AcceptResult> {
    const now = await this.clock.bindable();
    const store = this.connection.accept.through(tx.sql);
    if (row.onExisting && (await store.replace(row, row.onExisting, now))) {
      this.counter.countIn(tx, 1, 0);
      return { id: row.id, accepted: true, replaced: true };
    }
    const inserted = await this.inserter.insertInTransaction(tx, [row], now);
    // An id stored since the replace found none: replaced now.
    const replaced = !inserted.length && !!row.onExisting && (await store.replace(row, row.onExisting, now));
    this.counter.countIn(tx, inserted.length || Number(replaced), Number(!inserted.length && !replaced));
    return replaced
      ? { id: row.id, accepted: true, replaced }
      : { id: row.id, accepted: inserted.length === 1 };
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
    const rows = messages.map((m, i) => this.rows.toRow(m, i));
    return inSendSpan(this.tracing, rows, () => this.acceptRows(rows, options));
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
    if (fresh.some((r) => r.onExisting)) {
      const joining = this.transactionOf(options);
      const tx = joining ? await joining : undefined;
      return this.replacer.acceptAll(rows, fresh, tx, (rest, into) =>
        this.insertAll(rest, rest, into, options),
      );
    }
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
      for (const id of await this.inserter.insertInTransaction(tx, fresh, now)) accepted.set(id, true);
      const results = acceptResults(rows, accepted);
      const n = results.filter((r) => r.accepted).length;
      this.counter.countIn(tx, n, results.length - n);
      return results;
    }
    // One INSERTED for the whole call (the database clock, read once): the chunks can then go
    // in parallel and the rows still sort in the caller's order (INSERTED, then the v7 ids).
    const now =
      fresh.length > this.options.acceptChunkSize ? await this.clock.now() : await this.clock.bindable();
    for (const id of await this.inserter.insertChunks(fresh, now)) accepted.set(id, true);
    const results = acceptResults(rows, accepted);
    const n = results.filter((r) => r.accepted).length;
    this.counter.count(n, results.length - n);
    return results;
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
}
