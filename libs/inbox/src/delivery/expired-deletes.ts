import { Inject, Injectable, Logger } from '@nestjs/common';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { InboxHistory } from '../history/inbox-history.service';
import { InboxClock } from '../inbox.clock';
import { INBOX_OPTIONS } from '../inbox.tokens';
import { InboxMetrics } from '../metrics/inbox.metrics';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import { InboxConnection } from '../store/inbox-connection';
import { DELIVERY_LOG_CONTEXT } from './delivery-state';

/** The deletes of one expiry cleanup (ExpiryCleanup schedules them; InboxDelivery.cleanupExpired runs them). */
@Injectable()
export class ExpiredDeletes {
  private readonly logger = new Logger(DELIVERY_LOG_CONTEXT);

  constructor(
    private readonly connection: InboxConnection,
    private readonly clock: InboxClock,
    private readonly metrics: InboxMetrics,
    @Inject(INBOX_OPTIONS) private readonly options: ResolvedInboxOptions,
    /** The opt-in history: expired messages noted, pruned at each run. */
    private readonly history: InboxHistory,
  ) {}

  /**
   * Deletes every expired message in bounded batches until none is left: each batch reads at
   * most `cleanupChunkSize` expired ids through the EXPIRATION index and deletes them in one
   * short autocommit statement, so nobody waits for more than one batch; the event loop gets a
   * turn between batches. Rows and batches go to the metrics. Returns how many were deleted.
   */
  async run(): Promise<number> {
    const { connection, clock, metrics, options, logger } = this;
    if (!connection.leadership.isLeader()) return 0;
    let total = 0;
    for (;;) {
      const now = await clock.bindable();
      const ids = await metrics.retry('cleanup', () =>
        connection.store.cleanup.expiredIds(options.cleanupChunkSize, now),
      );
      if (!ids.length) break;
      const deleted = await metrics.retry('cleanup', () => connection.store.cleanup.deleteExpired(ids, now));
      total += deleted;
      if (deleted) this.history.expired(ids);
      metrics.expired.add(deleted);
      metrics.cleanupBatches.add(1);
      if (ids.length < options.cleanupChunkSize || !deleted) break;
      await yieldToLoop();
    }
    if (total) {
      logger.log(`Deleted ${total} expired message(s)`);
    }
    // Group rows whose message was deleted from outside (a Java client, by hand).
    const orphans = await metrics
      .retry('cleanup', () => connection.store.cleanup.deleteOrphanGroups(options.cleanupChunkSize))
      .catch((error) => {
        logger.warn(`Could not delete group rows of deleted messages: ${(error as Error).message}`);
        return 0;
      });
    if (orphans) logger.debug(`Deleted ${orphans} group row(s) of messages deleted elsewhere`);
    await this.history
      .afterCleanup()
      .catch((error) =>
        logger.warn(`Inbox history or stats not pruned or sampled: ${(error as Error).message}`),
      );
    return total;
  }
}
