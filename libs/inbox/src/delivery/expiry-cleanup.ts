import type { Logger } from '@nestjs/common';
import type { HoldfastTimers } from '@holdfast/core/kit';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { OutcomeLog } from '../history/inbox-history.service';
import type { InboxClock } from '../inbox.clock';
import type { InboxMetrics } from '../metrics/inbox.metrics';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import type { InboxConnection } from '../store/inbox-connection';
import { CleanupTicks } from './cleanup-ticks';
import type { DatabaseOutage } from './database-outage';

/** What the cleanup needs from the delivery service that owns it. */
export interface ExpiryCleanupContext {
  connection: InboxConnection;
  clock: InboxClock;
  metrics: InboxMetrics;
  options: ResolvedInboxOptions;
  outage: DatabaseOutage;
  logger: Logger;
  timers: () => HoldfastTimers;
  /** `holdfast:inbox:cleanup:<table>` (the table is known once the module has started). */
  timerName: () => string;
  cleanupMs: number;
  /** False once the node drains: no further tick is armed. */
  running: () => boolean;
  /** The opt-in history: expired messages noted, pruned at each run. */
  history: () => OutcomeLog;
}

/** The expiry cleanup of a delivering node: its schedule, and the bounded deletes themselves. */
export class ExpiryCleanup {
  /** Who cleans at a scheduled tick (created with the first one). */
  private ticks?: CleanupTicks;

  constructor(private readonly ctx: ExpiryCleanupContext) {}

  /**
   * One cleanup per tick for the whole cluster: the node that claims the tick (competing mode,
   * see CleanupTicks) or the leader cleans, the others count a skipped tick. The next tick is
   * timed to the database clock's next tick boundary.
   */
  schedule(delay: number): void {
    const { ctx } = this;
    if (!ctx.running()) return;
    this.ticks ??= new CleanupTicks({ ...ctx, intervalMs: ctx.cleanupMs });
    const ticks = this.ticks;
    ctx.timers().set(ctx.timerName(), delay, () => {
      ticks
        .claim()
        .then((mine) => (mine ? this.run() : 0))
        .catch((error) => {
          if (!ctx.outage.failed(error, 'the expiry cleanup'))
            ctx.logger.error(`Cleanup of expired messages failed: ${(error as Error).message}`);
        })
        .then(() => ticks.untilNextTick())
        .catch(() => ctx.cleanupMs)
        .then((next) => this.schedule(next));
    });
  }

  /**
   * Deletes every expired message in bounded batches until none is left: each batch reads at
   * most `cleanupChunkSize` expired ids through the EXPIRATION index and deletes them in one
   * short autocommit statement, so nobody waits for more than one batch; the event loop gets a
   * turn between batches. Rows and batches go to the metrics. Returns how many were deleted.
   */
  async run(): Promise<number> {
    const { connection, clock, metrics, options, logger } = this.ctx;
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
      if (deleted) this.ctx.history().expired(ids);
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
    await this.ctx
      .history()
      .afterCleanup()
      .catch((error) =>
        logger.warn(`Inbox history or stats not pruned or sampled: ${(error as Error).message}`),
      );
    return total;
  }
}
