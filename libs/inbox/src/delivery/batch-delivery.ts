import type { Logger } from '@nestjs/common';
import { Mutex } from 'async-mutex';
import type { InboxConnection } from '../store/inbox-connection';
import type { BatchClaimer } from './batch-claimer';
import type { ClaimLedger } from './claim-ledger';
import { DeliveryRun, emptyReport, type DeliveryReport, type DeliveryRunContext } from './delivery-run';
import { fullClaim } from './delivery-settings';

/** What batch delivery needs from the delivery service that owns it. */
export interface BatchDeliveryContext {
  connection: InboxConnection;
  claimer: BatchClaimer;
  ledger: ClaimLedger;
  logger: Logger;
  /** What each run of a batch uses. */
  run: DeliveryRunContext;
}

/**
 * The work of one delivery run: claim a batch (or take the one claimed ahead), deliver it
 * (DeliveryRun), then the last deletes of what it delivered. One run at a time per node.
 */
export class BatchDelivery {
  private readonly gate = new Mutex();

  constructor(private readonly ctx: BatchDeliveryContext) {}

  /**
   * `overlap`: a run of the delivery loop. It claims the next batch while it delivers a full one
   * (ungrouped), and returns before its last deletes are done (see deliverBatch).
   */
  async deliverNext(overlap: boolean): Promise<DeliveryReport> {
    if (!this.ctx.connection.leadership.isLeader()) {
      await this.ctx.claimer.handBackPrefetched();
      return emptyReport();
    }
    return this.gate.runExclusive(() => this.deliverBatch(overlap));
  }

  /** Resolves once no run is in progress. */
  waitForIdle(): Promise<void> {
    return this.gate.waitForUnlock();
  }

  private async deliverBatch(overlap: boolean): Promise<DeliveryReport> {
    const { ctx } = this;
    const { options, running } = ctx.run;
    const claim = await ctx.claimer.next();
    const { rows } = claim;
    if (!rows.length) return emptyReport(claim.taken ?? 0);
    // A full batch: more are waiting. The next batch is claimed now, while this one runs. Not
    // when grouped: a group's next message is only ready once the one before it is gone.
    if (
      overlap &&
      (claim.taken ?? rows.length) >= fullClaim(options) &&
      options.groupBy === undefined &&
      running()
    )
      ctx.claimer.prefetch();
    let lastDeletes: Promise<void> | undefined;
    try {
      const delivered = await new DeliveryRun(ctx.run, claim).deliver();
      // The last deletes of this batch (the others went while it ran). In the loop, ungrouped,
      // the next claim goes out beside them: its rows are other rows (these are leased), and its
      // handlers wait for the slots these deletes give back. Grouped, the next claim waits.
      lastDeletes = ctx.ledger.flush().finally(() => ctx.ledger.finish(rows));
      if (!overlap || options.groupBy !== undefined || !running()) await lastDeletes;
      else
        lastDeletes.catch((error) =>
          ctx.logger.error(`Could not delete delivered messages: ${(error as Error).message}`),
        );
      return delivered;
    } finally {
      if (!lastDeletes) await ctx.ledger.flush().finally(() => ctx.ledger.finish(rows));
    }
  }
}
