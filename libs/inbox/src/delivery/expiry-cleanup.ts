import { Inject, Injectable, Logger } from '@nestjs/common';
import { CleanupTicks } from './cleanup-ticks';
import { DatabaseOutage } from './database-outage';
import { DELIVERY_SETTINGS, type DeliverySettings } from './delivery-settings';
import { DELIVERY_LOG_CONTEXT, DeliveryState } from './delivery-state';
import { ExpiredDeletes } from './expired-deletes';

/** The expiry cleanup of a delivering node: its schedule, and the bounded deletes themselves (ExpiredDeletes). */
@Injectable()
export class ExpiryCleanup {
  private readonly logger = new Logger(DELIVERY_LOG_CONTEXT);

  constructor(
    /** Who cleans at a scheduled tick. */
    private readonly ticks: CleanupTicks,
    private readonly deletes: ExpiredDeletes,
    private readonly outage: DatabaseOutage,
    private readonly state: DeliveryState,
    @Inject(DELIVERY_SETTINGS) private readonly settings: DeliverySettings,
  ) {}

  /** The first tick, one cleanup interval after the start. */
  start(): void {
    this.schedule(this.settings.cleanupMs);
  }

  /**
   * One cleanup per tick for the whole cluster: the node that claims the tick (competing mode,
   * see CleanupTicks) or the leader cleans, the others count a skipped tick. The next tick is
   * timed to the database clock's next tick boundary.
   */
  schedule(delay: number): void {
    const { state, ticks } = this;
    if (!state.running) return;
    state.timers.set(state.timerName('cleanup'), delay, () => {
      ticks
        .claim()
        .then((mine) => (mine ? this.run() : 0))
        .catch((error) => {
          if (!this.outage.failed(error, 'the expiry cleanup'))
            this.logger.error(`Cleanup of expired messages failed: ${(error as Error).message}`);
        })
        .then(() => ticks.untilNextTick())
        .catch(() => this.settings.cleanupMs)
        .then((next) => this.schedule(next));
    });
  }

  /** Deletes every expired message in bounded batches until none is left (see ExpiredDeletes.run). */
  run(): Promise<number> {
    return this.deletes.run();
  }
}
