import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleInit,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import {
  findSchedulerRegistry,
  HoldfastTimers,
  instanceId,
  monotonicMillis,
  parseDuration,
  toNumber,
  type SqlClient,
} from '@holdfast/core/kit';
import { randomBytes, randomUUID } from 'node:crypto';
import { InboxClock } from '../inbox.clock';
import { INBOX_OPTIONS } from '../inbox.tokens';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import type { MessageRow } from '../store/cor-message.rows';
import { InboxConnection } from '../store/inbox-connection';
import { HistoryBuffer, type Buffered } from './history-buffer';
import type { HistoryEntry, HistoryOutcome, HistoryTypeFilter, InboxStatsMinute } from './history.types';
import { InboxHistoryStatements, type HistoryRecord } from './inbox-history.statements';
import { historyEntryOf } from './history-reader';
import { INBOX_HISTORY_TABLE, INBOX_STATS_TABLE, MAX_HISTORY_ERROR_LENGTH } from './inbox-history.tables';

const MINUTE = 60_000;
/** Rows per INSERT (10 parameters each: far under every driver's limit). */
const INSERT_ROWS = 500;
/** Rows per prune statement. */
const PRUNE_ROWS = 5000;

/** The history's part in the delivery: synchronous, it only notes in memory. */
export interface OutcomeLog {
  delivered(row: MessageRow): void;
  failed(row: MessageRow, error: string, parked: boolean): void;
  expired(ids: readonly string[]): void;
  /** At each cleanup tick, on the node that cleans: prune, and sample depth and leader. */
  afterCleanup(): Promise<void>;
}

/**
 * The opt-in history (`history`) and per-minute statistics (`stats`) of an inbox, on tables of its
 * own. The delivery only notes outcomes in memory (a bounded buffer, counters); this service writes
 * them in one multi-row INSERT per `flushInterval` (history) and once a minute (stats), on the
 * application's pool, never on the delivery's way. A full buffer drops and counts; a failed flush
 * keeps what fits for the next one. Off: no table, no timer, no write.
 */
@Injectable()
export class InboxHistory
  implements OutcomeLog, OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger(InboxHistory.name);
  private readonly node = instanceId();
  /** History row keys: this process's random prefix and a counter (see INBOX_HISTORY_TABLE). */
  private readonly keyPrefix = randomBytes(6).toString('hex');
  private sequence = 0;
  private readonly buffer: HistoryBuffer<HistoryRecord>;
  private readonly counters = { delivered: 0, failed: 0, parked: 0 };
  private timers = new HoldfastTimers();
  private statementsOnce?: InboxHistoryStatements;
  private flushing?: Promise<number>;
  private failing = false;
  private running = false;

  constructor(
    private readonly connection: InboxConnection,
    private readonly clock: InboxClock,
    @Inject(INBOX_OPTIONS) private readonly options: ResolvedInboxOptions,
    private readonly moduleRef: ModuleRef,
  ) {
    this.buffer = new HistoryBuffer(options.history?.maxBuffered ?? 0);
  }

  /** True when the `history` option is on. */
  get enabled(): boolean {
    return this.options.history !== undefined;
  }

  /** True when the `stats` option is on. */
  get statsEnabled(): boolean {
    return this.options.stats !== undefined;
  }

  /** Records dropped since start: the buffer was full (the database down or too slow). */
  get dropped(): number {
    return this.buffer.dropped;
  }

  async onModuleInit(): Promise<void> {
    if (this.enabled) await this.connection.ensureTable(INBOX_HISTORY_TABLE);
    if (this.statsEnabled) await this.connection.ensureTable(INBOX_STATS_TABLE);
  }

  onApplicationBootstrap(): void {
    if (!this.options.deliver || (!this.enabled && !this.statsEnabled)) return;
    this.timers = new HoldfastTimers(findSchedulerRegistry(this.moduleRef));
    this.running = true;
    if (this.enabled) this.scheduleFlush();
    if (this.statsEnabled) this.scheduleStats();
  }

  /** What is noted is written before TypeORM closes the DataSource. */
  async beforeApplicationShutdown(): Promise<void> {
    this.running = false;
    this.timers.clearAll();
    if (this.enabled) await this.flush().catch(() => 0);
    if (this.statsEnabled) await this.flushStats().catch(() => undefined);
  }

  delivered(row: MessageRow): void {
    if (this.statsEnabled) this.counters.delivered++;
    if (this.enabled) this.note(row, 'delivered', row.retries + 1, null);
  }

  failed(row: MessageRow, error: string, parked: boolean): void {
    if (this.statsEnabled) {
      this.counters.failed++;
      if (parked) this.counters.parked++;
    }
    if (this.enabled) this.note(row, parked ? 'parked' : 'failed', row.retries + 1, error);
  }

  expired(ids: readonly string[]): void {
    if (!this.enabled) return;
    for (const id of ids) this.buffer.push(this.record(id, 'expired', 0, null));
  }

  /**
   * Writes what waits in the buffer, in INSERTs of up to 500 rows; resolves with how many were
   * written. One flush at a time: a call during one waits for it and then writes what is left.
   */
  async flush(): Promise<number> {
    if (!this.enabled) return 0;
    while (this.flushing) await this.flushing.catch(() => 0);
    const flushing = (this.flushing = this.writeBuffer());
    try {
      return await flushing;
    } finally {
      this.flushing = undefined;
    }
  }

  /** Writes this node's counters since the last call as one row of the current minute (if any). */
  async flushStats(): Promise<void> {
    if (!this.statsEnabled) return;
    const { delivered, failed, parked } = this.counters;
    if (!delivered && !failed && !parked) return;
    this.counters.delivered = this.counters.failed = this.counters.parked = 0;
    // Just past a minute boundary, the counts are the past minute's.
    const minuteMs = Math.floor(((await this.clock.now()) - 1000) / MINUTE) * MINUTE;
    const record = { entryId: randomUUID(), node: this.node, minuteMs, delivered, failed, parked };
    try {
      await this.sql.execute(
        this.statements.insertStats([{ ...record, depth: null, parkedNow: null, leader: null }]),
      );
    } catch (error) {
      this.counters.delivered += delivered;
      this.counters.failed += failed;
      this.counters.parked += parked;
      throw error;
    }
  }

  async afterCleanup(): Promise<void> {
    if (this.enabled) await this.prune();
    if (this.statsEnabled) await this.sample();
  }

  /** Deletes history rows older than `retention`, then the oldest beyond `maxRows`; stats past theirs. */
  async prune(): Promise<number> {
    const now = await this.clock.now();
    let deleted = 0;
    const history = this.options.history;
    if (history) {
      const before = now - parseDuration(history.retention, 'history.retention');
      deleted += await this.deleteAll(() => this.statements.pruneHistoryBefore(before, PRUNE_ROWS));
      deleted += await this.pruneByCount(history.maxRows);
    }
    const stats = this.options.stats;
    if (stats) {
      const before = now - parseDuration(stats.retention, 'stats.retention');
      await this.deleteAll(() => this.statements.pruneStatsBefore(before, PRUNE_ROWS));
    }
    return deleted;
  }

  /** A message's history, oldest first (at most `limit` rows). */
  async ofMessage(id: string, limit: number): Promise<HistoryEntry[]> {
    if (!this.enabled) return [];
    const rows = await this.sql.query<Record<string, unknown>>(this.statements.ofMessage(id, limit));
    return rows.map(historyEntryOf);
  }

  /** The latest history rows of a type, newest first. */
  async ofType(type: HistoryTypeFilter, limit: number, outcome?: HistoryOutcome): Promise<HistoryEntry[]> {
    if (!this.enabled) return [];
    const rows = await this.sql.query<Record<string, unknown>>(this.statements.ofType(type, limit, outcome));
    return rows.map(historyEntryOf);
  }

  /** The minutes of the last `minutes` (database clock) that have rows, oldest first. */
  async statsSince(minutes: number): Promise<InboxStatsMinute[]> {
    if (!this.statsEnabled) return [];
    const now = await this.clock.now();
    const since = Math.floor(now / MINUTE) * MINUTE - (minutes - 1) * MINUTE;
    const rows = await this.sql.query<Record<string, unknown>>(this.statements.statsSince(since));
    return rows.map((r) => ({
      minute: new Date(toNumber(r.minute)),
      delivered: toNumber(r.delivered ?? 0),
      failed: toNumber(r.failed ?? 0),
      parked: toNumber(r.parked ?? 0),
      depth: r.depth === null || r.depth === undefined ? null : toNumber(r.depth),
      parkedNow: r.parked_now === null || r.parked_now === undefined ? null : toNumber(r.parked_now),
      leader: typeof r.leader === 'string' ? r.leader : null,
    }));
  }

  private note(row: MessageRow, outcome: HistoryOutcome, attempt: number, error: string | null): void {
    this.buffer.push(this.record(row.id, outcome, attempt, error, row));
    if (this.buffer.size >= INSERT_ROWS && !this.flushing && this.running) void this.flushQuietly();
  }

  private record(
    messageId: string,
    outcome: HistoryOutcome,
    attempt: number,
    error: string | null,
    type?: MessageRow,
  ): HistoryRecord {
    return {
      entryId: `${this.keyPrefix}-${(++this.sequence).toString(36).padStart(10, '0')}`,
      messageId,
      namespace: type ? type.namespace : null,
      name: type ? type.name : null,
      revision: type ? type.revision : null,
      outcome,
      attempt,
      error: error === null ? null : error.slice(0, MAX_HISTORY_ERROR_LENGTH),
      node: this.node,
      atMs: 0,
    };
  }

  private async writeBuffer(): Promise<number> {
    let written = 0;
    while (this.buffer.size) {
      const batch = this.buffer.take(INSERT_ROWS);
      try {
        const now = await this.clock.now();
        const taken = monotonicMillis();
        const records = batch.map(({ record, at }: Buffered<HistoryRecord>) => {
          record.atMs = Math.round(now - (taken - at));
          return record;
        });
        await this.sql.execute(this.statements.insertHistory(records));
        written += batch.length;
      } catch (error) {
        this.buffer.putBack(batch);
        throw error;
      }
    }
    return written;
  }

  private async flushQuietly(): Promise<void> {
    try {
      await this.flush();
      if (this.failing)
        this.logger.log(`Inbox history written again (${this.buffer.dropped} record(s) dropped so far)`);
      this.failing = false;
    } catch (error) {
      if (!this.failing)
        this.logger.warn(
          `Inbox history not written, kept in memory up to ${this.options.history?.maxBuffered} record(s): ${(error as Error).message}`,
        );
      this.failing = true;
    }
  }

  private scheduleFlush(): void {
    if (!this.running) return;
    const ms = parseDuration(this.options.history!.flushInterval, 'history.flushInterval');
    this.timers.set(this.timerName('history'), ms, () => {
      void this.flushQuietly().then(() => this.scheduleFlush());
    });
  }

  private scheduleStats(): void {
    if (!this.running) return;
    void this.untilNextMinute().then((ms) =>
      this.timers.set(this.timerName('stats'), ms, () => {
        this.flushStats()
          .catch((error) => this.logger.warn(`Inbox stats not written: ${(error as Error).message}`))
          .finally(() => this.scheduleStats());
      }),
    );
  }

  private async untilNextMinute(): Promise<number> {
    const now = await this.clock.now().catch(() => NaN);
    return Number.isFinite(now) ? MINUTE - (now % MINUTE) + 50 : MINUTE;
  }

  /** The inbox's depth (due and retrying), its parked messages and this node as the one that cleans. */
  private async sample(): Promise<void> {
    const now = await this.clock.now();
    const counts = await this.connection.store.management.counts(now);
    const minuteMs = Math.floor(now / MINUTE) * MINUTE;
    await this.sql.execute(
      this.statements.insertStats([
        {
          entryId: randomUUID(),
          node: this.node,
          minuteMs,
          delivered: 0,
          failed: 0,
          parked: 0,
          depth: counts.due + counts.retrying,
          parkedNow: counts.parked,
          leader: this.node,
        },
      ]),
    );
  }

  private async pruneByCount(maxRows: number): Promise<number> {
    const [row] = await this.sql.query<{ c: unknown }>(this.statements.countHistory());
    let excess = toNumber(row?.c ?? 0) - maxRows;
    let deleted = 0;
    while (excess > 0) {
      const ids = await this.sql.query<{ id: string }>(
        this.statements.oldestHistory(Math.min(excess, PRUNE_ROWS)),
      );
      if (!ids.length) break;
      deleted += await this.sql.execute(this.statements.deleteHistory(ids.map((r) => r.id)));
      excess -= ids.length;
    }
    return deleted;
  }

  private async deleteAll(
    next: () => ReturnType<InboxHistoryStatements['pruneHistoryBefore']>,
  ): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.sql.execute(next());
      total += deleted;
      if (deleted < PRUNE_ROWS) return total;
    }
  }

  private timerName(what: 'history' | 'stats'): string {
    return `holdfast:inbox:${what}:${this.connection.store.table}`;
  }

  /** The application's pool: the history is background work, never in the way of claims and heartbeats. */
  private get sql(): SqlClient {
    return this.connection.acceptClient;
  }

  private get statements(): InboxHistoryStatements {
    return (this.statementsOnce ??= new InboxHistoryStatements(this.sql.dialect, this.options.tablePrefix));
  }
}
