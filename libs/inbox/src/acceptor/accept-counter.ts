import type { CallerTransaction } from '../accept-tx/caller-transaction';
import type { InboxDelivery } from '../delivery/inbox-delivery.service';
import type { InboxMetrics } from '../metrics/inbox.metrics';

/** What an accept counts (accepted, duplicates) and the delivery it wakes once messages are stored. */
export class AcceptCounter {
  constructor(
    private readonly metrics: InboxMetrics,
    /** This node's delivery loop, woken by an accept instead of waiting for its next poll. */
    private readonly delivery?: InboxDelivery,
  ) {}

  count(accepted: number, duplicates: number): void {
    if (accepted) {
      this.metrics.accepted.add(accepted);
      this.delivery?.wake();
    }
    if (duplicates) this.metrics.duplicates.add(duplicates);
  }

  /** count(), with the wake-up after the caller's commit. */
  countIn(tx: CallerTransaction, accepted: number, duplicates: number): void {
    if (accepted) {
      tx.afterCommit(() => {
        this.metrics.accepted.add(accepted);
        this.delivery?.wake();
      });
    }
    if (duplicates) this.metrics.duplicates.add(duplicates);
  }
}
