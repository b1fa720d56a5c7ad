import type { Logger } from '@nestjs/common';
import type { OutcomeLog } from '../history/inbox-history.service';
import type { InboxClock } from '../inbox.clock';
import { messageTypeLabel } from '../management/message-type-label';
import type { InboxMetrics } from '../metrics/inbox.metrics';
import type { MessageRow } from '../store/cor-message.rows';
import type { InboxConnection } from '../store/inbox-connection';
import { nextRetryDelay, type BackoffPolicy } from './backoff';
import type { ClaimLedger } from './claim-ledger';
import { errorText } from './handler-run';

/** What the recorder needs from the delivery service that owns it. */
export interface OutcomeRecorderContext {
  connection: InboxConnection;
  clock: InboxClock;
  metrics: InboxMetrics;
  logger: Logger;
  ledger: ClaimLedger;
  backoff: BackoffPolicy;
  unhandledMs: number;
  /** The opt-in history and stats (notes in memory only). */
  history: () => OutcomeLog;
}

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
 * `unhandledDelay`), messages given back unattempted.
 */
export class OutcomeRecorder {
  /** Message types without a handler already warned about (one warning per type). */
  private readonly warnedTypes = new Set<string>();

  constructor(private readonly ctx: OutcomeRecorderContext) {}

  /** Records a failed attempt of `row`. */
  async failed(row: MessageRow, error: unknown): Promise<RecordedFailure> {
    const { ctx } = this;
    const delay = nextRetryDelay(ctx.backoff, row.retries);
    const text = errorText(error);
    const now = await ctx.clock.bindable();
    const applied = await ctx.metrics.retry('failure', () =>
      ctx.connection.store.completion.recordFailure({
        id: row.id,
        seenRetries: row.retries,
        error: text,
        delayMs: delay,
        now,
      }),
    );
    ctx.metrics.failed.add(1);
    const parked = delay === undefined && applied;
    ctx.history().failed(row, text, parked);
    if (parked) {
      ctx.metrics.parked.add(1);
      ctx.logger.warn(
        `Message '${row.id}' parked after ${row.retries + 1} failed attempt(s): ${firstLine(text)}`,
      );
    } else {
      ctx.logger.debug(`Message '${row.id}' failed (attempt ${row.retries + 1}); retry in ${delay} ms`);
    }
    return { delay, parked };
  }

  /** A delivered message (its delete is the ClaimLedger's): noted for the history, nothing awaited. */
  delivered(row: MessageRow): void {
    this.ctx.history().delivered(row);
  }

  /** No handler for `row`'s type: due again after `unhandledDelay`, the reason in ERROR. */
  async unhandled(row: MessageRow): Promise<void> {
    const { ctx } = this;
    const type = messageTypeLabel(row);
    ctx.metrics.unhandledMessage(type);
    if (!this.warnedTypes.has(type)) {
      this.warnedTypes.add(type);
      ctx.logger.warn(
        `No @InboxHandler for message type '${type}' (message '${row.id}'); it stays in the inbox`,
      );
    }
    const now = await ctx.clock.bindable();
    await ctx.metrics.retry('release', () =>
      ctx.connection.store.completion.release(
        [row.id],
        ctx.unhandledMs,
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
    const { ctx } = this;
    const now = await ctx.clock.bindable();
    const held = ctx.ledger.stillHeld(ids);
    if (!held.length) return;
    for (const id of held) ctx.ledger.drop(id);
    await ctx.metrics.retry('release', () => ctx.connection.store.completion.release(held, delayMs, now));
  }
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0];
}
