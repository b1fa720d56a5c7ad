import type { Logger } from '@nestjs/common';
import { monotonicMillis, parseDuration } from '@holdfast/core/kit';
import type { InboxClock } from '../inbox.clock';
import type { InboxMetrics } from '../metrics/inbox.metrics';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import type { InboxConnection } from '../store/inbox-connection';
import type { ClaimLedger } from './claim-ledger';
import type { DatabaseOutage } from './database-outage';
import type { Claim } from './delivery-run';
import { largestClaim } from './delivery-settings';
import { RateLimiter } from './rate-limiter';

/** What the claimer needs from the delivery service that owns it. */
export interface BatchClaimerContext {
  connection: InboxConnection;
  clock: InboxClock;
  metrics: InboxMetrics;
  options: Pick<ResolvedInboxOptions, 'batchSize' | 'groupBy' | 'pollInterval'>;
  ledger: ClaimLedger;
  outage: DatabaseOutage;
  logger: Logger;
}

/**
 * Claims batches of due messages for this node, the size growing on a backlog, and holds at most
 * one batch claimed ahead (the prefetch) while a full one is delivered.
 */
export class BatchClaimer {
  /** The next batch, claimed while a full one was delivered (see prefetch). */
  private prefetched?: Promise<Claim>;
  /**
   * How many messages the next claim asks for: `batchSize`, doubled after each claim that came
   * back full, up to `largestClaim(batchSize)`, and `batchSize` again after one that did not.
   */
  private claimSize: number;
  /** How old the paused types a claim leaves out may be: the poll interval (see InboxPauseStatements). */
  private readonly pauseReadMs: number;
  /** The option `rateLimits` (see RateLimiter): nothing without a limited type among the rows. */
  private readonly rates: RateLimiter;

  constructor(private readonly ctx: BatchClaimerContext) {
    this.rates = new RateLimiter(ctx);
    this.claimSize = ctx.options.batchSize;
    this.pauseReadMs = parseDuration(ctx.options.pollInterval, 'pollInterval');
  }

  /** The batch claimed ahead if there is one, else a new claim. */
  next(): Promise<Claim> {
    const next = this.prefetched;
    this.prefetched = undefined;
    return next ?? this.claim();
  }

  /**
   * Claims the next batch now, while the current one runs (a local queue of one batch), so that
   * the database's work and the handlers' overlap. Its rows wait for handler slots; a shutdown
   * hands them back unstarted.
   */
  prefetch(): void {
    const prefetch = this.claim();
    prefetch.catch(() => undefined); // a failed claim fails the run that takes it
    this.prefetched = prefetch;
  }

  /**
   * Claims up to `claimSize` due messages; the ledger holds (and renews) them from then on. On a
   * backlog the claims grow (ungrouped): a claim costs a round trip and a statement whatever its
   * size, so a database 1 ms away or more delivers at the rate its claims come back, and larger
   * claims keep the handlers busy where a prefetched batch alone does not; once the backlog is
   * gone the claims are `batchSize` again, so that nodes share what comes in.
   */
  private async claim(): Promise<Claim> {
    const { ctx } = this;
    const size = this.claimSize;
    const started = monotonicMillis();
    const clockNow = await ctx.clock.bindable();
    const pauses = ctx.connection.pauses;
    // The paused types, read at most once per poll interval (or again after a pause or resume).
    const paused = pauses ? await pauses.snapshot(this.pauseReadMs) : [];
    const claimed = await ctx.metrics.retry('claim', async () => {
      const lease = await ctx.ledger.nextLease(clockNow, () => ctx.clock.now());
      try {
        return await ctx.connection.store.claims.claim(size, clockNow, lease, undefined, paused);
      } catch (error) {
        ctx.ledger.claimUnanswered(lease.until);
        throw error;
      }
    });
    ctx.outage.answered();
    const { now } = claimed;
    // Rate-limited types: the rows beyond the window's permits go back now (see RateLimiter).
    const rows = await this.rates.admit(claimed.rows, now, clockNow);
    const takenCount = claimed.rows.length;
    // Grouped, a group's next message is ready only once the one before it is gone: no growth.
    const grow = takenCount >= size && ctx.options.groupBy === undefined;
    this.claimSize = grow ? Math.min(size * 2, largestClaim(ctx.options.batchSize)) : ctx.options.batchSize;
    if (rows.length) ctx.ledger.take(rows, now, started);
    return { rows, now, started, taken: takenCount };
  }

  /** The batch claimed ahead, not started: due again at once, for any node (shutdown, lost leadership). */
  async handBackPrefetched(): Promise<void> {
    const { ledger, logger } = this.ctx;
    const next = this.prefetched;
    this.prefetched = undefined;
    const claim = await next?.catch(() => undefined);
    if (!claim?.rows.length) return;
    const ids = ledger.stillHeld(claim.rows.map((row) => row.id));
    try {
      await ledger.handBack(ids);
    } catch (error) {
      logger.warn(`Could not hand back ${ids.length} message(s): ${(error as Error).message}`);
    } finally {
      ledger.finish(claim.rows);
    }
  }
}
