import { Inject, Injectable, Logger } from '@nestjs/common';
import { withTimeout } from '@holdfast/core/kit';
import { InboxShutdownError } from '../errors';
import { BatchClaimer } from './batch-claimer';
import { BatchDelivery } from './batch-delivery';
import { ClaimLedger } from './claim-ledger';
import { DELIVERY_SETTINGS, type DeliverySettings } from './delivery-settings';
import { DELIVERY_LOG_CONTEXT, DeliveryState } from './delivery-state';
import { PollSchedule } from './poll-schedule';

/**
 * The drain of a delivering node at shutdown: no new claim and no new handler from then on; what
 * this node claimed and has not started is handed back at once; running handlers get
 * `shutdownGrace` to finish, then their signal aborts and their messages are handed back too.
 */
@Injectable()
export class DeliveryDrain {
  private readonly logger = new Logger(DELIVERY_LOG_CONTEXT);

  constructor(
    private readonly state: DeliveryState,
    @Inject(DELIVERY_SETTINGS) private readonly settings: DeliverySettings,
    private readonly schedule: PollSchedule,
    private readonly claimer: BatchClaimer,
    private readonly batches: BatchDelivery,
    private readonly ledger: ClaimLedger,
  ) {}

  async drain(): Promise<void> {
    const { state, ledger } = this;
    const { graceMs } = this.settings;
    state.stop();
    // No more polls or cleanups; heartbeats and completion flushes go on while handlers drain.
    state.timers.clear(state.timerName('poll'));
    state.timers.clear(state.timerName('cleanup'));
    const handedBack = this.claimer.handBackPrefetched();
    const finished = Promise.all([this.schedule.cycle?.catch(() => undefined), this.batches.waitForIdle()]);
    if ((await withTimeout(finished, graceMs, () => 'timeout' as const)) === 'timeout') {
      const left = ledger.ids();
      ledger.abortRunning(new InboxShutdownError(graceMs));
      await ledger
        .handBack(left)
        .catch((error) =>
          this.logger.warn(`Could not hand back ${left.length} message(s): ${(error as Error).message}`),
        );
      this.logger.warn(
        `${left.length} message(s) still running after shutdownGrace (${graceMs} ms): their handlers were aborted ` +
          `and the messages handed back to other nodes`,
      );
    }
    await handedBack;
    await ledger.flush().catch(() => undefined);
    await ledger.stop();
    this.settings.deadlines?.clear();
    state.timers.clearAll();
  }
}
