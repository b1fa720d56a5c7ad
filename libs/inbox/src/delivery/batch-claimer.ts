import { Inject, Injectable, Logger } from '@nestjs/common';
import { monotonicMillis, parseDuration } from '@holdfast/core/kit';
import { InboxClock } from '../inbox.clock';
import { INBOX_OPTIONS } from '../inbox.tokens';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import { InboxConnection } from '../store/inbox-connection';
import { ClaimLedger } from './claim-ledger';
import type { Claim } from './delivery-run';
import { largestClaim } from './delivery-settings';
import { DELIVERY_LOG_CONTEXT } from './delivery-state';
import { LeasedClaim } from './leased-claim';
import { RateLimiter } from './rate-limiter';

/**
 * Claims batches of due messages for this node, the size growing on a backlog, and holds at most
 * one batch claimed ahead (the prefetch) while a full one is delivered.
 */
@Injectable()
export class BatchClaimer {
  private readonly logger = new Logger(DELIVERY_LOG_CONTEXT);
  /** The next batch, claimed while a full one was delivered (see prefetch). */
  private prefetched?: Promise<Claim>;
  /**
   * How many messages the next claim asks for: `batchSize`, doubled after each claim that came
   * back full, up to `largestClaim(batchSize)`, and `batchSize` again after one that did not.
   */
  private claimSize: number;
  /** How old the paused types a claim leaves out may be: the poll interval (see InboxPauseStatements). */
  private readonly pauseReadMs: number;

  constructor(
    private readonly leased: LeasedClaim,
    /** The option `rateLimits` (see RateLimiter): nothing without a limited type among the rows. */
    private readonly rates: RateLimiter,
    private readonly ledger: ClaimLedger,
    private readonly connection: InboxConnection,
    private readonly clock: InboxClock,
    @Inject(INBOX_OPTIONS) private readonly options: ResolvedInboxOptions,
  ) {
    this.claimSize = options.batchSize;
    this.pauseReadMs = parseDuration(options.pollInterval, 'pollInterval');
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
    const { options, ledger } = this;
    const size = this.claimSize;
    const started = monotonicMillis();
    const clockNow = await this.clock.bindable();
    const pauses = this.connection.pauses;
    // The paused types, read at most once per poll interval (or again after a pause or resume).
    const paused = pauses ? await pauses.snapshot(this.pauseReadMs) : [];
    const claimed = await this.leased.claim(size, clockNow, paused);
    const { now } = claimed;
    // Rate-limited types: the rows beyond the window's permits go back now (see RateLimiter).
    const rows = await this.rates.admit(claimed.rows, now, clockNow);
    const takenCount = claimed.rows.length;
    // Grouped, a group's next message is ready only once the one before it is gone: no growth.
    const grow = takenCount >= size && options.groupBy === undefined;
    this.claimSize = grow ? Math.min(size * 2, largestClaim(options.batchSize)) : options.batchSize;
    if (rows.length) ledger.take(rows, now, started);
    return { rows, now, started, taken: takenCount };
  }

  /** The batch claimed ahead, not started: due again at once, for any node (shutdown, lost leadership). */
  async handBackPrefetched(): Promise<void> {
    const { ledger, logger } = this;
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
