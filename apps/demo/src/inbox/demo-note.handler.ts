import { Injectable, Logger } from '@nestjs/common';
import { InboxHandler, type InboxMessage } from '@holdfast/inbox';

export const DEMO_NOTE_TYPE = { namespace: 'demo', name: 'note' };

export interface DemoNote {
  seq: number;
  body: unknown;
}

/** A note whose body is `{ "failAttempts": n }` fails its first n attempts (n ≥ maxRetries parks it). */
function failAttempts(body: unknown): number {
  const n = (body as { failAttempts?: unknown } | null)?.failAttempts;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : 0;
}

/**
 * Handles demo notes; the first attempt of every third one fails, to show retries with backoff,
 * and a note with `failAttempts` fails that many times (3, the demo's maxRetries, parks it: the
 * dashboard's retry then delivers it).
 */
@Injectable()
export class DemoNoteHandler {
  private readonly logger = new Logger(DemoNoteHandler.name);
  delivered = 0;
  failedAttempts = 0;
  readonly recent: { id: string; seq: number; retries: number; at: string }[] = [];
  /**
   * Attempts so far per failAttempts note, counted here rather than read from RETRIES: an admin's
   * "retry now" on a parked note sets RETRIES back to maxRetries − 1 (one more attempt, as
   * camunda-bpm-correlate does), and that attempt must then succeed.
   */
  private readonly attempts = new Map<string, number>();

  @InboxHandler(DEMO_NOTE_TYPE)
  async handle(message: InboxMessage<DemoNote>): Promise<void> {
    const { seq, body } = message.payload;
    const tried = this.attempts.get(message.id) ?? 0;
    if (tried < failAttempts(body)) {
      this.failedAttempts++;
      this.attempts.set(message.id, tried + 1);
      throw new Error(
        `demo: note #${seq} fails attempt ${tried + 1} of the ${failAttempts(body)} it was told to fail`,
      );
    }
    this.attempts.delete(message.id);
    if (seq % 3 === 0 && message.retries === 0) {
      this.failedAttempts++;
      throw new Error(`demo: note #${seq} fails on its first attempt (every third note does)`);
    }
    this.delivered++;
    this.recent.unshift({ id: message.id, seq, retries: message.retries, at: new Date().toISOString() });
    this.recent.length = Math.min(this.recent.length, 10);
    this.logger.log(`Delivered note #${seq} (${message.id}) after ${message.retries} failed attempt(s)`);
  }
}
