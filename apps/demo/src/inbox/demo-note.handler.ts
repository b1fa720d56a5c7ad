import { Injectable, Logger } from '@nestjs/common';
import { InboxHandler, type InboxMessage } from '@holdfast/inbox';

export const DEMO_NOTE_TYPE = { namespace: 'demo', name: 'note' };

export interface DemoNote {
  seq: number;
  body: unknown;
}

/** Handles demo notes; the first attempt of every third one fails, to show retries with backoff. */
@Injectable()
export class DemoNoteHandler {
  private readonly logger = new Logger(DemoNoteHandler.name);
  delivered = 0;
  failedAttempts = 0;
  readonly recent: { id: string; seq: number; retries: number; at: string }[] = [];

  @InboxHandler(DEMO_NOTE_TYPE)
  async handle(message: InboxMessage<DemoNote>): Promise<void> {
    const { seq } = message.payload;
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
