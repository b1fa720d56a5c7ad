import { Inject, Injectable, Logger } from '@nestjs/common';
import { monotonicMillis } from '@holdfast/core/kit';
import { InboxHistory } from '../history/inbox-history.service';
import { InboxClock } from '../inbox.clock';
import { messageTypeLabel } from '../management/message-type-label';
import { InboxMetrics } from '../metrics/inbox.metrics';
import type { MessageRow } from '../store/cor-message.rows';
import { InboxConnection } from '../store/inbox-connection';
import { nextRetryDelay } from './backoff';
import { ClaimLedger } from './claim-ledger';
import { DELIVERY_SETTINGS, type DeliverySettings } from './delivery-settings';
import { DELIVERY_LOG_CONTEXT } from './delivery-state';
import { errorText } from './handler-run';

/** A failed attempt, as recorded. */
export interface RecordedFailure {
  /** The retry delay, or undefined when the message was parked. */
  delay: number | undefined;
  /** Parked by this attempt (the write applied: nobody recorded an attempt meanwhile). */
  parked: boolean;
}

/**
 * Writes what became of a delivered message other than its delete (the ClaimLedger's): a failed
 * attempt (retry with backoff, or parked), a message without a handler (due again after
 * `unhandledDelay`), messages given back unattempted; and counts outcomes in the metrics and the
 * opt-in history (notes in memory only).
 */
@Injectable()
export class OutcomeRecorder {
  private readonly logger = new Logger(DELIVERY_LOG_CONTEXT);
  /** Message types without a handler already warned about (one warning per type). */
  private readonly warnedTypes = new Set<string>();

  constructor(
    private readonly connection: InboxConnection,
    private readonly clock: InboxClock,
    private readonly metrics: InboxMetrics,
    private readonly ledger: ClaimLedger,
    @Inject(DELIVERY_SETTINGS) private readonly settings: DeliverySettings,
    private readonly history: InboxHistory,
  ) {}

  /** `unhandledDelay`: how long a message without a handler (and the rest of its group) waits. */
  get unhandledMs(): number {
    return this.settings.unhandledMs;
  }

  /** Records a failed attempt of `row`. */
  async failed(row: MessageRow, error: unknown): Promise<RecordedFailure> {
    const delay = nextRetryDelay(this.settings.backoff, row.retries);
    const text = errorText(error);
    const now = await this.clock.bindable();
    const applied = await this.metrics.retry('failure', () =>
      this.connection.store.completion.recordFailure({
        id: row.id,
        seenRetries: row.retries,
        error: text,
        delayMs: delay,
        now,
      }),
    );
    this.metrics.failed.add(1);
    const parked = delay === undefined && applied;
    this.history.failed(row, text, parked);
    if (parked) {
      this.metrics.parked.add(1);
      this.logger.warn(
        `Message '${row.id}' parked after ${row.retries + 1} failed attempt(s): ${firstLine(text)}`,
      );
    } else {
      this.logger.debug(`Message '${row.id}' failed (attempt ${row.retries + 1}); retry in ${delay} ms`);
    }
    return { delay, parked };
  }

  /** A delivered message (its delete is the ClaimLedger's): counted and noted for the history, nothing awaited. */
  delivered(row: MessageRow): void {
    this.metrics.delivered.add(1);
    this.history.delivered(row);
  }

  /** A batch is delivered: its time from the claim (`started`, monotonic) to the metrics. */
  batchDelivered(started: number): void {
    this.metrics.batchDelivered(monotonicMillis() - started);
  }

  /** No handler for `row`'s type: due again after `unhandledDelay`, the reason in ERROR. */
  async unhandled(row: MessageRow): Promise<void> {
    const type = messageTypeLabel(row);
    this.metrics.unhandledMessage(type);
    if (!this.warnedTypes.has(type)) {
      this.warnedTypes.add(type);
      this.logger.warn(
        `No @InboxHandler for message type '${type}' (message '${row.id}'); it stays in the inbox`,
      );
    }
    const now = await this.clock.bindable();
    await this.metrics.retry('release', () =>
      this.connection.store.completion.release(
        [row.id],
        this.settings.unhandledMs,
        now,
        `No @InboxHandler for type '${type}'`,
      ),
    );
  }

  /**
   * The rest of a group that stopped: those of `ids` whose claim this node still holds (a lost one
   * is not ours to release) go back unattempted, due in `delayMs`.
   */
  async releaseRest(ids: readonly string[], delayMs: number): Promise<void> {
    const now = await this.clock.bindable();
    const held = this.ledger.stillHeld(ids);
    if (!held.length) return;
    for (const id of held) this.ledger.drop(id);
    await this.metrics.retry('release', () => this.connection.store.completion.release(held, delayMs, now));
  }
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0];
}
