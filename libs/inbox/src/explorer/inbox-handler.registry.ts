import { Injectable } from '@nestjs/common';
import type { InboxDeliveryClaim } from '../fencing/message-fence';
import type { InboxMessage, MessageType } from '../inbox-message';

/** What a handler gets beside the message. */
export interface InboxHandlerContext {
  /**
   * Aborts when this delivery is given up, with the reason: the handler ran past its time limit
   * (`VisibilityTimeoutError` or `HandlerTimeoutError`), the node lost its claim
   * (`InboxClaimLostError`), or the node is shutting down and its grace period is over (the
   * message is then handed back to another node).
   */
  readonly signal: AbortSignal;
  /**
   * This delivery's claim on the message: its fencing token, and `fenced(manager, work)`, which
   * runs a write in a transaction only while the message is still this delivery's (see the
   * README, "Fenced handlers").
   */
  readonly claim: InboxDeliveryClaim;
}

export type HandlerFn = (message: InboxMessage, context: InboxHandlerContext) => unknown;

export interface RegisteredHandler {
  type: MessageType;
  /** `Class.method`, for logs. */
  name: string;
  /** At most this many calls at once on this node (`@InboxHandler({ concurrency })`). */
  concurrency?: number;
  handle: HandlerFn;
}

/** The handlers found at bootstrap; the most specific match (namespace, revision) wins. */
@Injectable()
export class InboxHandlerRegistry {
  private readonly handlers: RegisteredHandler[] = [];

  register(handler: RegisteredHandler): void {
    this.handlers.push(handler);
  }

  all(): readonly RegisteredHandler[] {
    return this.handlers;
  }

  find(type: {
    namespace?: string | null;
    name: string;
    revision?: string | null;
  }): RegisteredHandler | undefined {
    let best: RegisteredHandler | undefined;
    let bestScore = -1;
    for (const h of this.handlers) {
      if (h.type.name !== type.name) continue;
      if (h.type.namespace !== undefined && h.type.namespace !== (type.namespace ?? undefined)) continue;
      if (h.type.revision !== undefined && h.type.revision !== (type.revision ?? undefined)) continue;
      const score = (h.type.namespace !== undefined ? 2 : 0) + (h.type.revision !== undefined ? 1 : 0);
      if (score > bestScore) [best, bestScore] = [h, score];
    }
    return best;
  }
}
