import { Inject, Injectable, Logger } from '@nestjs/common';
import { Mutex } from 'async-mutex';
import { INBOX_OPTIONS } from '../inbox.tokens';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import { InboxConnection } from '../store/inbox-connection';
import { BatchClaimer } from './batch-claimer';
import { ClaimLedger } from './claim-ledger';
import { emptyReport, type DeliveryReport } from './delivery-run';
import { DeliveryRuns } from './delivery-runs';
import { fullClaim } from './delivery-settings';
import { DELIVERY_LOG_CONTEXT, DeliveryState } from './delivery-state';

/**
 * The work of one delivery run: claim a batch (or take the one claimed ahead), deliver it
 * (DeliveryRun), then the last deletes of what it delivered. One run at a time per node.
 */
@Injectable()
export class BatchDelivery {
  private readonly logger = new Logger(DELIVERY_LOG_CONTEXT);
  private readonly gate = new Mutex();

  constructor(
    private readonly connection: InboxConnection,
    private readonly claimer: BatchClaimer,
    private readonly ledger: ClaimLedger,
    private readonly runs: DeliveryRuns,
    @Inject(INBOX_OPTIONS) private readonly options: ResolvedInboxOptions,
    private readonly state: DeliveryState,
  ) {}

  /**
   * `overlap`: a run of the delivery loop. It claims the next batch while it delivers a full one
   * (ungrouped), and returns before its last deletes are done (see deliverBatch).
   */
  async deliverNext(overlap: boolean): Promise<DeliveryReport> {
    if (!this.connection.leadership.isLeader()) {
      await this.claimer.handBackPrefetched();
      return emptyReport();
    }
    return this.gate.runExclusive(() => this.deliverBatch(overlap));
  }

  /** Resolves once no run is in progress. */
  waitForIdle(): Promise<void> {
    return this.gate.waitForUnlock();
  }

  private async deliverBatch(overlap: boolean): Promise<DeliveryReport> {
    const { claimer, ledger, options, state } = this;
    const claim = await claimer.next();
    const { rows } = claim;
    if (!rows.length) return emptyReport(claim.taken ?? 0);
    // A full batch: more are waiting. The next batch is claimed now, while this one runs. Not
    // when grouped: a group's next message is only ready once the one before it is gone.
    if (
      overlap &&
      (claim.taken ?? rows.length) >= fullClaim(options) &&
      options.groupBy === undefined &&
      state.running
    )
      claimer.prefetch();
    let lastDeletes: Promise<void> | undefined;
    try {
      const delivered = await this.runs.deliver(claim);
      // The last deletes of this batch (the others went while it ran). In the loop, ungrouped,
      // the next claim goes out beside them: its rows are other rows (these are leased), and its
      // handlers wait for the slots these deletes give back. Grouped, the next claim waits.
      lastDeletes = ledger.flush().finally(() => ledger.finish(rows));
      if (!overlap || options.groupBy !== undefined || !state.running) await lastDeletes;
      else
        lastDeletes.catch((error) =>
          this.logger.error(`Could not delete delivered messages: ${(error as Error).message}`),
        );
      return delivered;
    } finally {
      if (!lastDeletes) await ledger.flush().finally(() => ledger.finish(rows));
    }
  }
}
