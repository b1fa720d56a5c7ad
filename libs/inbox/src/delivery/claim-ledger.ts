import { Inject, Injectable, Logger } from '@nestjs/common';
import { monotonicMillis, withTimeout } from '@holdfast/core/kit';
import { randomInt } from 'node:crypto';
import { InboxClaimLostError, NoAnswerError } from '../errors';
import { InboxClock } from '../inbox.clock';
import { InboxMetrics } from '../metrics/inbox.metrics';
import type { ClaimLease } from '../store/cor-message.claim';
import type { Lease, MessageRow, Now } from '../store/cor-message.rows';
import { DatabaseOutage } from './database-outage';
import { CompletionLanes } from './completion-lanes';
import { DELIVERY_SETTINGS, type DeliverySettings } from './delivery-settings';
import { DELIVERY_LOG_CONTEXT, DeliveryState } from './delivery-state';
import { LeaseGate } from './lease-gate';

/** A running handler call, as the ledger sees it: given up when its claim is lost. */
export interface RunningCall {
  abort(reason: unknown): void;
}

/** Unanswered claims offered to the next claims at most (the oldest are left to their lease end). */
const MAX_UNANSWERED = 16;

/** Lease ends kept per claim while its heartbeats get no answer (the oldest are let go). */
const MAX_UNSURE_ENDS = 16;

/**
 * The messages this node has claimed and not finished (delivered and deleted, failed, released),
 * with the lease end it last wrote into NEXT_RETRY: a claim is NEXT_RETRY = the end of the lease
 * (the seed has no owner column).
 *
 * - Heartbeats: every third of `visibilityTimeout`, while this node holds claims, one UPDATE moves
 *   every lease to a new end, only where NEXT_RETRY still holds the value this node wrote.
 * - Completions: a delivered message is deleted by the next flush, with the same condition.
 * - A row that no longer holds its value (taken by another node after its lease ran out, changed
 *   by an admin), or a lease that ends while the heartbeats fail, is a lost claim: its handler's
 *   signal aborts and its outcome is not recorded.
 */
@Injectable()
export class ClaimLedger {
  private readonly logger = new Logger(DELIVERY_LOG_CONTEXT);
  private readonly leases = new Map<string, number>();
  /**
   * Lease ends that heartbeats without an answer may have written (an UPDATE may have run, its
   * answer lost): until a heartbeat answers, a row holding any of them is still this node's.
   */
  private readonly unsure = new Map<string, number[]>();
  /** Running handler calls by message id (to give one up when its claim is lost). */
  private readonly inHand = new Map<string, RunningCall>();
  /** A heartbeat alone, completion deletes side by side (both read the lease ends; see LeaseGate). */
  private readonly gate = new LeaseGate();
  /** Completion deletes in flight (flush resolves once they are all done). */
  private readonly flushing = new Set<Promise<void>>();
  private readonly beatMs: number;
  /** Heartbeats run (re-armed `holdfast:inbox:heartbeat:<table>`) while this node holds claims. */
  private heartbeatOn = false;
  private beating = false;
  /** The database clock at the last claim, and the local monotonic time then. */
  private dbClock = { at: NaN, mono: 0 };
  /**
   * Lease ends of this node's claims that got no answer: each may have leased rows to nobody
   * (the statement ran, its answer was lost). Offered to the next claims until they end.
   */
  private unanswered: number[] = [];
  /** Delivered, waiting for the next delete. */
  private completions: string[] = [];
  /** What to call once the next delete is done (see complete). */
  private afterFlush: (() => void)[] = [];
  private readonly leaseMs: number;
  private flushTimerName?: string;
  private flushAtCount?: number;

  constructor(
    private readonly lanes: CompletionLanes,
    private readonly clock: InboxClock,
    private readonly metrics: InboxMetrics,
    private readonly outage: DatabaseOutage,
    private readonly state: DeliveryState,
    @Inject(DELIVERY_SETTINGS) private readonly settings: DeliverySettings,
  ) {
    this.leaseMs = settings.leaseMs;
    this.beatMs = Math.max(1, Math.floor(settings.leaseMs / 3));
  }

  /** `holdfast:inbox:flush:<table>` (the table is known once the module has its options). */
  private get flushTimer(): string {
    return (this.flushTimerName ??= this.state.timerName('flush'));
  }

  /**
   * A flush starts as soon as this many delivered messages wait for their delete (read at the
   * first delivery, once the database, and so the default, is known).
   */
  private flushAt(): number {
    const { settings } = this;
    return this.lanes.oneWriter ? settings.flushAtOneWriter : settings.flushAt;
  }

  /** Records a claim's rows (taken at `now` on the database clock, `started` locally) and beats. */
  take(rows: readonly MessageRow[], now: number, started: number): void {
    if (Number.isFinite(now)) this.dbClock = { at: now, mono: started };
    for (const row of rows) {
      this.leases.set(row.id, row.nextRetry ?? now + this.leaseMs);
      this.unsure.delete(row.id);
    }
    this.startHeartbeat();
  }

  /**
   * The lease of the next claim: a lease end this node chooses (so it knows what a claim that
   * gets no answer wrote), and the lease ends of its unanswered claims that have not ended.
   * `clockNow` is the injected clock; else the database clock as last seen here (`read` reads it
   * when there is none yet). Without an injected clock a random part of a second is added, so
   * two nodes' claims do not write the same lease end in the same millisecond.
   */
  async nextLease(clockNow: Now, read: () => Promise<number>): Promise<ClaimLease & { until: number }> {
    if (clockNow === undefined && !Number.isFinite(this.dbClock.at)) {
      const mono = monotonicMillis();
      this.dbClock = { at: await read(), mono };
    }
    const now = clockNow ?? this.databaseNow();
    const until = Math.round(now) + this.leaseMs + (clockNow === undefined ? randomInt(1_000) : 0);
    this.unanswered = this.unanswered.filter((end) => end > now);
    return { until, orphans: this.unanswered.length ? [...this.unanswered] : undefined };
  }

  /** A claim failed without an answer we can trust: its rows, if any, are ours to take back. */
  claimUnanswered(until: number): void {
    this.unanswered.push(until);
    if (this.unanswered.length > MAX_UNANSWERED) this.unanswered.shift();
  }

  /** The batch is over: whatever of it is still here is not ours to renew any more. */
  finish(rows: readonly MessageRow[]): void {
    for (const row of rows) this.forget(row.id);
    if (!this.leases.size) this.stopHeartbeat();
  }

  holds(id: string): boolean {
    return this.leases.has(id);
  }

  /** Not this node's to renew or release any more (failed, expired, released, left for cleanup). */
  drop(id: string): void {
    this.forget(id);
  }

  private forget(id: string): void {
    this.leases.delete(id);
    this.unsure.delete(id);
  }

  /** A heartbeat without an answer may have moved `id`'s lease end to `until`. */
  private mayHold(id: string, until: number): void {
    const ends = this.unsure.get(id) ?? [];
    if (!ends.includes(until)) this.unsure.set(id, [...ends, until].slice(-MAX_UNSURE_ENDS));
  }

  /** The lease ends a row of each of `ids` may hold while this node still holds it. */
  private leasesOf(ids: Iterable<string>): Lease[] {
    const leases: Lease[] = [];
    for (const id of ids) {
      const until = this.leases.get(id);
      if (until === undefined) continue;
      leases.push({ id, until });
      for (const maybe of this.unsure.get(id) ?? []) if (maybe !== until) leases.push({ id, until: maybe });
    }
    return leases;
  }

  /**
   * The lease ends the row of `id` may hold while this node still holds its claim (none when it
   * does not): what a fenced write checks the row against.
   */
  leaseEndsOf(id: string): number[] {
    return this.leasesOf([id]).map((lease) => lease.until);
  }

  /** Every message this node holds now. */
  ids(): string[] {
    return [...this.leases.keys()];
  }

  /** The ids among these whose claim this node still holds (a lost one is not ours to release). */
  stillHeld(ids: readonly string[]): string[] {
    return ids.filter((id) => this.leases.has(id));
  }

  /** A handler call runs for `id`: it is given up if the claim is lost. */
  running(id: string, call: RunningCall): void {
    this.inHand.set(id, call);
  }

  stopped(id: string): void {
    this.inHand.delete(id);
  }

  /** Gives up every running handler call (shutdown after the grace period). */
  abortRunning(reason: unknown): void {
    for (const call of this.inHand.values()) call.abort(reason);
  }

  /** Makes claimed messages due now again, for any node. */
  async handBack(ids: readonly string[]): Promise<void> {
    if (!ids.length) return;
    const now = await this.clock.bindable();
    await this.metrics.retry('release', () => this.lanes.inboxLane.release(ids, 0, now));
    for (const id of ids) this.forget(id);
  }

  /** Heartbeats stop and the deletes' lane closes (shutdown, once the flushes are done). */
  async stop(): Promise<void> {
    this.stopHeartbeat();
    await this.lanes.stop();
  }

  // ---- heartbeats ----------------------------------------------------------------------------

  private startHeartbeat(): void {
    if (this.heartbeatOn) return;
    this.heartbeatOn = true;
    this.armHeartbeat();
  }

  /** The next heartbeat in `beatMs`, armed before this one runs (a slow one never delays the next). */
  private armHeartbeat(): void {
    this.state.timers.set(this.state.timerName('heartbeat'), this.beatMs, () => {
      if (!this.heartbeatOn) return;
      this.armHeartbeat();
      void this.beat();
    });
  }

  private stopHeartbeat(): void {
    this.heartbeatOn = false;
    this.state.timers.clear(this.state.timerName('heartbeat'));
  }

  /** The clock the leases are in: the injected clock, or the database clock as last seen plus what passed here. */
  private async leaseNow(): Promise<number> {
    const bound = await this.clock.bindable();
    if (bound !== undefined) return bound;
    return this.databaseNow();
  }

  /** The database clock as last seen here plus what passed since (NaN before any reading). */
  private databaseNow(): number {
    return this.dbClock.at + (monotonicMillis() - this.dbClock.mono);
  }

  /**
   * One heartbeat: every lease this node holds moves to now + visibilityTimeout in one UPDATE
   * (bounded by the heartbeat interval). A row that is not ours any more is a lost claim; when
   * the heartbeat fails, every lease that has ended meanwhile is lost too.
   */
  private async beat(): Promise<void> {
    if (this.beating) {
      // The previous heartbeat still waits for the database: only look at what has run out.
      this.outage.failed(new NoAnswerError(this.beatMs), 'a heartbeat');
      await this.loseEnded('the heartbeats got no answer from the database');
      return;
    }
    this.beating = true;
    try {
      await this.gate.exclusive(async () => {
        const leases = this.leasesOf(this.leases.keys());
        if (!leases.length) return;
        const until = (await this.leaseNow()) + this.leaseMs;
        const owned = await withTimeout(
          this.lanes.heartbeats.extendLeases(leases, until),
          this.beatMs,
          () => {
            throw new NoAnswerError(this.beatMs);
          },
        ).catch((error: unknown) => {
          // The UPDATE may have run and only its answer been lost: its rows then hold `until`.
          // Noted before the gate opens, so the flush waiting behind it deletes them too.
          for (const { id } of leases) if (this.leases.has(id)) this.mayHold(id, until);
          throw error;
        });
        for (const { id } of leases) {
          if (!this.leases.has(id)) continue; // finished meanwhile (failed, released)
          if (owned.has(id)) {
            this.leases.set(id, until);
            this.unsure.delete(id);
          } else this.loseClaim(id, 'its row was taken by another node or changed meanwhile');
        }
      });
    } catch (error) {
      if (!this.outage.failed(error, 'a heartbeat'))
        this.logger.warn(`Inbox heartbeat failed: ${(error as Error).message}`);
      await this.loseEnded(`the heartbeats failed until its lease ended: ${(error as Error).message}`);
    } finally {
      this.beating = false;
    }
  }

  private async loseEnded(detail: string): Promise<void> {
    const now = await this.leaseNow();
    for (const [id, until] of this.leases) if (until <= now) this.loseClaim(id, detail);
  }

  private loseClaim(id: string, detail: string): void {
    this.forget(id);
    const error = new InboxClaimLostError(id, detail);
    this.inHand.get(id)?.abort(error);
    // During an outage the outage's one warning says it; each lost claim is a detail.
    if (this.outage.ongoing) this.logger.debug(error.message);
    else this.logger.warn(error.message);
  }

  // ---- completions ---------------------------------------------------------------------------

  /**
   * A delivered message: deleted with the next flush, after `completionFlushInterval` or as soon
   * as `flushAt` are waiting (every handler slot of the node waiting for its delete, at most).
   * `deleted` is called when that flush is done (or has failed: the message then comes back
   * after its lease).
   */
  complete(id: string, deleted: () => void): void {
    this.completions.push(id);
    this.afterFlush.push(deleted);
    if (this.completions.length >= (this.flushAtCount ??= this.flushAt())) {
      void this.flush();
    } else if (this.completions.length === 1) {
      // The first since the last flush (which cleared the timer): the flush is due in flushMs.
      this.state.timers.set(this.flushTimer, this.settings.flushMs, () => void this.flush());
    }
  }

  /**
   * Deletes the delivered messages waiting, where this node still holds their claim (a message
   * whose claim was lost is left to the node that has it). Deletes run side by side (each its
   * own messages), a heartbeat never beside them (see LeaseGate). Resolves when every flush so
   * far is done.
   */
  flush(): Promise<void> {
    this.state.timers.clear(this.flushTimer);
    const ids = this.completions;
    const after = this.afterFlush;
    if (ids.length) {
      this.completions = [];
      this.afterFlush = [];
      // A full flush: this node delivers a backlog (its deletes may go beside its claims, see CompletionLanes).
      const full = ids.length >= (this.flushAtCount ??= this.flushAt());
      const flushed = this.gate.shared(() => this.deleteDelivered(ids, after, full));
      this.flushing.add(flushed);
      void flushed.finally(() => this.flushing.delete(flushed));
    }
    // A heartbeat waiting (or running) is part of "so far": what it noted, a later flush uses.
    return Promise.all([...this.flushing, this.gate.idle()]).then(() => undefined);
  }

  /** One completion delete (never rejects: the messages then come back after their lease). */
  private async deleteDelivered(
    ids: readonly string[],
    after: readonly (() => void)[],
    full: boolean,
  ): Promise<void> {
    const leases = this.leasesOf(ids);
    try {
      await this.lanes.run(full, (deletes) =>
        this.metrics.retry('delete', () => deletes.deleteOwned(leases)),
      );
    } catch (error) {
      // They come back after their lease, to this node or another.
      const held = new Set(leases.map((l) => l.id)).size;
      if (!this.outage.failed(error, `deleting ${held} delivered message(s)`))
        this.logger.error(`Could not delete ${held} delivered message(s): ${(error as Error).message}`);
    } finally {
      for (const id of ids) this.forget(id);
      for (const deleted of after) deleted();
    }
  }
}
