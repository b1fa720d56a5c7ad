import type { Logger } from '@nestjs/common';
import type { HoldfastTimers } from '@holdfast/core/kit';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import type { DatabaseOutage } from './database-outage';
import type { DeliveryReport } from './delivery-run';
import { fullClaim } from './delivery-settings';

/** What the schedule needs from the delivery service that owns it. */
export interface PollScheduleContext {
  options: Pick<ResolvedInboxOptions, 'batchSize' | 'fairShare' | 'groupBy' | 'wakeOnAccept'>;
  pollMs: number;
  outage: DatabaseOutage;
  logger: Logger;
  timers: () => HoldfastTimers;
  /** `holdfast:inbox:poll:<table>`. */
  timerName: () => string;
  /** False once the node drains: no further run is armed. */
  running: () => boolean;
  /** One run of the delivery loop. */
  run: () => Promise<DeliveryReport>;
}

/**
 * When the delivery loop runs: another run at once while batches come back full (or an accept
 * asked for one meanwhile), otherwise after `pollInterval`; an accept on this node starts one now.
 */
export class PollSchedule {
  /** The run in progress (or the last one). */
  cycle?: Promise<unknown>;
  /** No delivery run in progress (a wake-up can start one at once). */
  private idle = true;
  /** An accept asked for a run while one was in progress: the next starts right after it. */
  private wakeRequested = false;

  constructor(private readonly ctx: PollScheduleContext) {}

  /** The next run in `delay` ms. */
  schedule(delay: number): void {
    const { ctx } = this;
    if (!ctx.running()) return;
    ctx.timers().set(ctx.timerName(), delay, () => {
      this.idle = false;
      this.wakeRequested = false;
      this.cycle = ctx.run().then(
        (report) => {
          this.idle = true;
          // Grouped: what this run finished may have made the next message of a group due.
          const again =
            report.claimed >= fullClaim(ctx.options) ||
            this.wakeRequested ||
            (ctx.options.groupBy !== undefined && report.claimed > report.skipped);
          this.schedule(again ? 0 : ctx.pollMs);
        },
        (error) => {
          this.idle = true;
          if (!ctx.outage.failed(error, 'a delivery run'))
            ctx.logger.error(`Delivery run failed: ${(error as Error).message}`, (error as Error).stack);
          this.schedule(ctx.pollMs);
        },
      );
    });
  }

  /**
   * A run now, or right after the one in progress (see InboxDelivery.wake); `always`: even
   * without `wakeOnAccept` (a resumed type).
   */
  wake(always = false): void {
    if (!this.ctx.running() || !(always || this.ctx.options.wakeOnAccept)) return;
    if (!this.idle) {
      this.wakeRequested = true;
      return;
    }
    this.schedule(0);
  }
}
