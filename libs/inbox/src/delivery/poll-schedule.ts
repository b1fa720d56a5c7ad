import { Inject, Injectable, Logger } from '@nestjs/common';
import { INBOX_OPTIONS } from '../inbox.tokens';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import { BatchDelivery } from './batch-delivery';
import { DatabaseOutage } from './database-outage';
import { DELIVERY_SETTINGS, fullClaim, type DeliverySettings } from './delivery-settings';
import { DELIVERY_LOG_CONTEXT, DeliveryState } from './delivery-state';

/**
 * When the delivery loop runs: another run at once while batches come back full (or an accept
 * asked for one meanwhile), otherwise after `pollInterval`; an accept on this node starts one now.
 */
@Injectable()
export class PollSchedule {
  private readonly logger = new Logger(DELIVERY_LOG_CONTEXT);
  /** The run in progress (or the last one). */
  cycle?: Promise<unknown>;
  /** No delivery run in progress (a wake-up can start one at once). */
  private idle = true;
  /** An accept asked for a run while one was in progress: the next starts right after it. */
  private wakeRequested = false;

  constructor(
    @Inject(INBOX_OPTIONS) private readonly options: ResolvedInboxOptions,
    @Inject(DELIVERY_SETTINGS) private readonly settings: DeliverySettings,
    private readonly batches: BatchDelivery,
    private readonly outage: DatabaseOutage,
    /** Not running once the node drains: no further run is armed. */
    private readonly state: DeliveryState,
  ) {}

  /** The first run, one poll interval after the start. */
  start(): void {
    this.schedule(this.settings.pollMs);
  }

  /** The next run in `delay` ms. */
  schedule(delay: number): void {
    const { options, settings, state } = this;
    if (!state.running) return;
    state.timers.set(state.timerName('poll'), delay, () => {
      this.idle = false;
      this.wakeRequested = false;
      // One run of the delivery loop.
      this.cycle = this.batches.deliverNext(true).then(
        (report) => {
          this.idle = true;
          // Grouped: what this run finished may have made the next message of a group due.
          const again =
            report.claimed >= fullClaim(options) ||
            this.wakeRequested ||
            (options.groupBy !== undefined && report.claimed > report.skipped);
          this.schedule(again ? 0 : settings.pollMs);
        },
        (error) => {
          this.idle = true;
          if (!this.outage.failed(error, 'a delivery run'))
            this.logger.error(`Delivery run failed: ${(error as Error).message}`, (error as Error).stack);
          this.schedule(settings.pollMs);
        },
      );
    });
  }

  /**
   * A run now, or right after the one in progress (see InboxDelivery.wake); `always`: even
   * without `wakeOnAccept` (a resumed type).
   */
  wake(always = false): void {
    if (!this.state.running || !(always || this.options.wakeOnAccept)) return;
    if (!this.idle) {
      this.wakeRequested = true;
      return;
    }
    this.schedule(0);
  }
}
