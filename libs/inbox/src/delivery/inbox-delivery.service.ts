import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import {
  findSchedulerRegistry,
  HoldfastTimers,
  isConnectionError,
  monotonicMillis,
  parseDuration,
  withTimeout,
} from '@holdfast/core';
import { ModuleRef } from '@nestjs/core';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { Mutex, Semaphore } from 'async-mutex';
import { apiEncoding, decodePayload } from '../acceptor/message-codec';
import { InboxClaimLostError } from '../errors';
import { InboxHandlerRegistry, type RegisteredHandler } from '../handler/inbox-handler.registry';
import { InboxClock } from '../inbox.clock';
import { INBOX_OPTIONS } from '../inbox.constants';
import type { InboxMessage, PayloadEncoding } from '../inbox-message';
import { InboxMetrics } from '../inbox.metrics';
import { ResolvedInboxOptions } from '../inbox.options';
import type { Lease, MessageRow } from '../store/cor-message.queries';
import { InboxConnection } from '../store/inbox-connection';
import { nextRetryDelay, type BackoffPolicy } from './backoff';
import { CleanupTicks } from './cleanup-ticks';

/** What one delivery run did. */
export interface DeliveryReport {
  claimed: number;
  delivered: number;
  failed: number;
  parked: number;
  unhandled: number;
  /** Claimed but expired by the time its turn came: left for cleanup, never delivered. */
  expired: number;
  /** Not attempted because an earlier message of its group failed (batchMode 'fail-first'). */
  skipped: number;
}

interface Item {
  row: MessageRow;
  message?: InboxMessage;
  decodeError?: unknown;
}

const EMPTY: DeliveryReport = {
  claimed: 0,
  delivered: 0,
  failed: 0,
  parked: 0,
  unhandled: 0,
  expired: 0,
  skipped: 0,
};

/**
 * The delivery loop: claims a batch of due messages, delivers them group by group (at most
 * `concurrency` handlers at once, and a handler's own `concurrency`), deletes what succeeded in
 * small batches as it goes, schedules retries with backoff for what failed, parks what failed too
 * often. Another batch follows at once while batches come back full; otherwise it waits
 * `pollInterval`.
 *
 * Claims and heartbeats: a claim is NEXT_RETRY = the end of the lease (the seed has no owner
 * column). The node keeps the lease end it wrote for each message it holds; a heartbeat every
 * third of `visibilityTimeout` moves all of them to a new end in one UPDATE, only where NEXT_RETRY
 * still holds the value this node wrote, and the delete of a delivered message has the same
 * condition. A row that no longer holds it (taken by another node after the lease ran out, or
 * changed by an admin), or a lease that ends while the heartbeats fail, is a lost claim: the
 * handler's signal aborts and its outcome is not recorded.
 */
@Injectable()
export class InboxDelivery implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(InboxDelivery.name);
  private readonly gate = new Mutex();
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly cleanupMs: number;
  private readonly unhandledMs: number;
  private readonly backoff: BackoffPolicy;
  private readonly warnedTypes = new Set<string>();
  /** `holdfast:inbox:{poll,cleanup,heartbeat,flush}:<table>`, in the app's SchedulerRegistry. */
  private timers = new HoldfastTimers();
  private running = false;
  private cycle?: Promise<unknown>;
  private readonly graceMs: number;
  /** No delivery run in progress (a wake-up can start one at once). */
  private idle = true;
  /** An accept asked for a run while one was in progress: the next starts right after it. */
  private wakeRequested = false;
  /**
   * Claimed by this node and not finished (delivered and deleted, failed, released), with the
   * lease end it last wrote into NEXT_RETRY: what the heartbeats renew and shutdown hands back.
   */
  private readonly claimed = new Map<string, number>();
  /** Heartbeats and completion deletes, one at a time (both read and move the lease ends). */
  private readonly leaseGate = new Mutex();
  private readonly beatMs: number;
  /** Heartbeats run (re-armed `holdfast:inbox:heartbeat:<table>`) while this node holds claims. */
  private heartbeatOn = false;
  private beating = false;
  /** The database clock at the last claim, and the local monotonic time then. */
  private dbClock = { at: NaN, mono: 0 };
  /** Running handlers by message id (to abort one whose claim is lost). */
  private readonly inHand = new Map<string, AbortController>();
  /** Delivered, waiting for the next delete. */
  private completions: string[] = [];
  private flushed?: { promise: Promise<void>; resolve: () => void };
  private readonly flushMs: number;
  private readonly handlerMs: number;
  /** Handler concurrency on this node, and per handler with its own limit. */
  private readonly slots: Semaphore;
  private readonly concurrency: number;
  private readonly handlerSlots = new Map<RegisteredHandler, Semaphore>();
  /** The running handlers' abort controllers. */
  private readonly running_ = new Set<AbortController>();
  /** Who cleans at a scheduled tick (created with the first one). */
  private cleanupTicks?: CleanupTicks;
  /** Since when (monotonic ms) the database has not answered the delivery loop, while it does not. */
  private downSince?: number;

  constructor(
    private readonly connection: InboxConnection,
    private readonly registry: InboxHandlerRegistry,
    private readonly clock: InboxClock,
    private readonly metrics: InboxMetrics,
    @Inject(INBOX_OPTIONS) private readonly options: ResolvedInboxOptions,
    private readonly moduleRef: ModuleRef,
  ) {
    this.pollMs = parseDuration(options.pollInterval, 'pollInterval');
    this.leaseMs = parseDuration(options.visibilityTimeout, 'visibilityTimeout');
    this.cleanupMs = parseDuration(options.cleanupInterval, 'cleanupInterval');
    this.unhandledMs = parseDuration(options.unhandledDelay, 'unhandledDelay');
    this.graceMs = parseDuration(options.shutdownGrace, 'shutdownGrace');
    this.beatMs = Math.max(1, Math.floor(this.leaseMs / 3));
    this.flushMs = parseDuration(options.completionFlushInterval, 'completionFlushInterval');
    this.handlerMs =
      options.handlerTimeout === undefined
        ? this.leaseMs
        : parseDuration(options.handlerTimeout, 'handlerTimeout');
    this.concurrency = options.concurrency ?? options.batchSize;
    this.slots = new Semaphore(this.concurrency);
    const r = options.retry;
    this.backoff = {
      maxRetries: r.maxRetries,
      initialDelay: parseDuration(r.initialDelay, 'retry.initialDelay'),
      multiplier: r.multiplier,
      maxDelay: parseDuration(r.maxDelay, 'retry.maxDelay'),
      jitter: r.jitter,
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.options.deliver) return;
    await this.connection.leadership.start();
    this.timers = new HoldfastTimers(findSchedulerRegistry(this.moduleRef));
    this.running = true;
    this.schedulePoll(this.pollMs);
    this.scheduleCleanup(this.cleanupMs);
  }

  /**
   * Drains: no new claim and no new handler from now on; what this node claimed and has not
   * started is handed back at once (due now, so another node takes it at its next poll); running
   * handlers get `shutdownGrace` to finish, then their signal aborts and their messages are
   * handed back too. Then it leaves the leader mutex, before TypeORM closes the DataSource.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.running = false;
    // No more polls or cleanups; heartbeats and completion flushes go on while handlers drain.
    this.timers.clear(this.timerName('poll'));
    this.timers.clear(this.timerName('cleanup'));
    const finished = Promise.all([this.cycle?.catch(() => undefined), this.gate.waitForUnlock()]);
    if ((await withTimeout(finished, this.graceMs, () => 'timeout' as const)) === 'timeout') {
      const left = [...this.claimed.keys()];
      for (const controller of this.running_) controller.abort(new InboxShutdownError(this.graceMs));
      await this.handBack(left).catch((error) =>
        this.logger.warn(`Could not hand back ${left.length} message(s): ${(error as Error).message}`),
      );
      this.logger.warn(
        `${left.length} message(s) still running after shutdownGrace (${this.graceMs} ms): their handlers were aborted ` +
          `and the messages handed back to other nodes`,
      );
    }
    await this.flush().catch(() => undefined);
    this.stopHeartbeat();
    this.timers.clearAll();
    if (this.options.deliver) await this.connection.leadership.stop();
  }

  /**
   * An accept on this node: starts a delivery run now instead of at the next poll (or right after
   * the run in progress). Other nodes still find the message at their next poll.
   */
  wake(): void {
    if (!this.running || !this.options.wakeOnAccept) return;
    if (!this.idle) {
      this.wakeRequested = true;
      return;
    }
    this.schedulePoll(0);
  }

  /** Makes claimed messages due now again, for any node. */
  private async handBack(ids: readonly string[]): Promise<void> {
    if (!ids.length) return;
    const now = await this.clock.bindable();
    await this.metrics.retry('release', () => this.connection.queries.release(ids, 0, now));
    for (const id of ids) this.claimed.delete(id);
  }

  // ---- heartbeats ----------------------------------------------------------------------------

  private startHeartbeat(): void {
    if (this.heartbeatOn) return;
    this.heartbeatOn = true;
    this.armHeartbeat();
  }

  /** The next heartbeat in `beatMs`, armed before this one runs (a slow one never delays the next). */
  private armHeartbeat(): void {
    this.timers.set(this.timerName('heartbeat'), this.beatMs, () => {
      if (!this.heartbeatOn) return;
      this.armHeartbeat();
      void this.beat();
    });
  }

  private stopHeartbeat(): void {
    this.heartbeatOn = false;
    this.timers.clear(this.timerName('heartbeat'));
  }

  /** `holdfast:inbox:<what>:<table>`, this node's timers in the SchedulerRegistry. */
  private timerName(what: 'poll' | 'cleanup' | 'heartbeat' | 'flush'): string {
    return `holdfast:inbox:${what}:${this.connection.queries.table}`;
  }

  /** The clock the leases are in: the injected clock, or the database clock as last seen plus what passed here. */
  private async leaseNow(): Promise<number> {
    const bound = await this.clock.bindable();
    if (bound !== undefined) return bound;
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
      this.databaseFailed(new HeartbeatNoAnswerError(this.beatMs), 'a heartbeat');
      await this.loseEnded('the heartbeats got no answer from the database');
      return;
    }
    this.beating = true;
    try {
      await this.leaseGate.runExclusive(async () => {
        const leases: Lease[] = [...this.claimed].map(([id, until]) => ({ id, until }));
        if (!leases.length) return;
        const until = (await this.leaseNow()) + this.leaseMs;
        const owned = await withTimeout(
          this.connection.queries.extendLeases(leases, until),
          this.beatMs,
          () => {
            throw new HeartbeatNoAnswerError(this.beatMs);
          },
        );
        for (const { id } of leases) {
          if (!this.claimed.has(id)) continue; // finished meanwhile (failed, released)
          if (owned.has(id)) this.claimed.set(id, until);
          else this.loseClaim(id, 'its row was taken by another node or changed meanwhile');
        }
      });
    } catch (error) {
      if (!this.databaseFailed(error, 'a heartbeat'))
        this.logger.warn(`Inbox heartbeat failed: ${(error as Error).message}`);
      await this.loseEnded(`the heartbeats failed until its lease ended: ${(error as Error).message}`);
    } finally {
      this.beating = false;
    }
  }

  private async loseEnded(detail: string): Promise<void> {
    const now = await this.leaseNow();
    for (const [id, until] of this.claimed) if (until <= now) this.loseClaim(id, detail);
  }

  private loseClaim(id: string, detail: string): void {
    this.claimed.delete(id);
    const error = new InboxClaimLostError(id, detail);
    const controller = this.inHand.get(id);
    if (controller && !controller.signal.aborted) controller.abort(error);
    // During an outage the outage's one warning says it; each lost claim is a detail.
    if (this.downSince === undefined) this.logger.warn(error.message);
    else this.logger.debug(error.message);
  }

  /**
   * An error of the delivery loop's SQL: true when it says the database cannot be reached or
   * stopped answering (then logged once per outage, as one warning), false for anything else
   * (the caller logs it as before).
   */
  private databaseFailed(error: unknown, during: string): boolean {
    if (!isConnectionError(error) && !(error instanceof HeartbeatNoAnswerError)) return false;
    if (this.downSince === undefined) {
      this.downSince = monotonicMillis();
      this.logger.warn(
        `The inbox's database (${this.connection.queries.table}) stopped answering (${during}: ` +
          `${(error as Error).message}); delivery resumes by itself when it answers again, and ` +
          `messages claimed meanwhile come back when their lease ends`,
      );
    } else {
      this.logger.debug(
        `The inbox's database is still not answering (${during}: ${(error as Error).message})`,
      );
    }
    return true;
  }

  /** The database answered the delivery loop: the end of an outage is one line. */
  private databaseAnswered(): void {
    if (this.downSince === undefined) return;
    const ms = Math.round(monotonicMillis() - this.downSince);
    this.downSince = undefined;
    this.logger.log(`The inbox's database (${this.connection.queries.table}) answers again after ${ms} ms`);
  }

  // ---- completions ---------------------------------------------------------------------------

  /**
   * A delivered message: deleted with the next flush, after `completionFlushInterval` or as soon
   * as `completionBatchSize` are waiting, or as soon as every handler slot of the node waits for
   * its delete. Resolves when that flush is done.
   */
  private complete(id: string): Promise<void> {
    this.completions.push(id);
    this.flushed ??= deferred();
    const done = this.flushed.promise;
    if (this.completions.length >= Math.min(this.options.completionBatchSize, this.concurrency)) {
      void this.flush();
    } else if (!this.timers.has(this.timerName('flush'))) {
      this.timers.set(this.timerName('flush'), this.flushMs, () => void this.flush());
    }
    return done;
  }

  /**
   * Deletes the delivered messages waiting, where this node still holds their claim (a message
   * whose claim was lost is left to the node that has it). Resolves when every flush so far is done.
   */
  private flush(): Promise<void> {
    this.timers.clear(this.timerName('flush'));
    const ids = this.completions.splice(0);
    const flushed = this.flushed;
    this.flushed = undefined;
    if (!ids.length) return this.leaseGate.waitForUnlock();
    return this.leaseGate.runExclusive(async () => {
      const leases: Lease[] = [];
      for (const id of ids) {
        const until = this.claimed.get(id);
        if (until !== undefined) leases.push({ id, until });
      }
      try {
        await this.metrics.retry('delete', () => this.connection.queries.deleteOwned(leases));
      } catch (error) {
        // They come back after their lease, to this node or another.
        if (!this.databaseFailed(error, `deleting ${leases.length} delivered message(s)`))
          this.logger.error(
            `Could not delete ${leases.length} delivered message(s): ${(error as Error).message}`,
          );
      } finally {
        for (const id of ids) this.claimed.delete(id);
        flushed?.resolve();
      }
    });
  }

  /**
   * Waits for a slot of the handler (its own limit first), then one of the node. The handler's
   * slot is given back when the call ends; the node's when its message is deleted, so that the
   * messages in this node's hands (running, or delivered and not yet deleted: what a crash
   * delivers again) never outnumber `concurrency`.
   */
  private async acquireSlots(handler: RegisteredHandler): Promise<{ handler: () => void; node: () => void }> {
    let own: Semaphore | undefined;
    if (handler.concurrency !== undefined) {
      own = this.handlerSlots.get(handler);
      if (!own) this.handlerSlots.set(handler, (own = new Semaphore(handler.concurrency)));
    }
    const [, releaseOwn] = own ? await own.acquire() : [0, () => undefined];
    const [, release] = await this.slots.acquire();
    return { handler: releaseOwn, node: release };
  }

  /** True when this node delivers now (always in competing mode; the mutex owner in leader mode). */
  isDelivering(): boolean {
    return this.options.deliver && this.connection.leadership.isLeader();
  }

  private schedulePoll(delay: number): void {
    if (!this.running) return;
    this.timers.set(this.timerName('poll'), delay, () => {
      this.idle = false;
      this.wakeRequested = false;
      this.cycle = this.deliverDue().then(
        (report) => {
          this.idle = true;
          // Grouped: what this run finished may have made the next message of a group due.
          const again =
            report.claimed >= this.options.batchSize ||
            this.wakeRequested ||
            (this.options.groupBy !== undefined && report.claimed > report.skipped);
          this.schedulePoll(again ? 0 : this.pollMs);
        },
        (error) => {
          this.idle = true;
          if (!this.databaseFailed(error, 'a delivery run'))
            this.logger.error(`Delivery run failed: ${(error as Error).message}`, (error as Error).stack);
          this.schedulePoll(this.pollMs);
        },
      );
    });
  }

  /**
   * One cleanup per tick for the whole cluster: the node that claims the tick (competing mode,
   * see CleanupTicks) or the leader cleans, the others count a skipped tick. The next tick is
   * timed to the database clock's next tick boundary.
   */
  private scheduleCleanup(delay: number): void {
    if (!this.running) return;
    this.cleanupTicks ??= new CleanupTicks(
      this.connection,
      this.clock,
      this.metrics,
      this.options,
      this.cleanupMs,
    );
    const ticks = this.cleanupTicks;
    this.timers.set(this.timerName('cleanup'), delay, () => {
      ticks
        .claim()
        .then((mine) => (mine ? this.cleanupExpired() : 0))
        .catch((error) => {
          if (!this.databaseFailed(error, 'the expiry cleanup'))
            this.logger.error(`Cleanup of expired messages failed: ${(error as Error).message}`);
        })
        .then(() => ticks.untilNextTick())
        .catch(() => this.cleanupMs)
        .then((next) => this.scheduleCleanup(next));
    });
  }

  /**
   * Deletes every expired message in bounded batches until none is left: each batch reads at
   * most `cleanupChunkSize` expired ids through the EXPIRATION index and deletes them in one
   * short autocommit statement, so nobody waits for more than one batch; the event loop gets a
   * turn between batches. Rows and batches go to the metrics. Returns how many were deleted.
   * Runs now on this node when called (on a delivering node); the schedule calls it on one node
   * per tick for the whole cluster.
   */
  async cleanupExpired(): Promise<number> {
    if (!this.connection.leadership.isLeader()) return 0;
    let total = 0;
    for (;;) {
      const now = await this.clock.bindable();
      const ids = await this.metrics.retry('cleanup', () =>
        this.connection.queries.expiredIds(this.options.cleanupChunkSize, now),
      );
      if (!ids.length) break;
      const deleted = await this.metrics.retry('cleanup', () =>
        this.connection.queries.deleteExpired(ids, now),
      );
      total += deleted;
      this.metrics.expired.add(deleted);
      this.metrics.cleanupBatches.add(1);
      if (ids.length < this.options.cleanupChunkSize || !deleted) break;
      await yieldToLoop();
    }
    if (total) {
      this.logger.log(`Deleted ${total} expired message(s)`);
    }
    // Group rows whose message was deleted from outside (a Java client, by hand).
    const orphans = await this.metrics
      .retry('cleanup', () => this.connection.queries.deleteOrphanGroups(this.options.cleanupChunkSize))
      .catch((error) => {
        this.logger.warn(`Could not delete group rows of deleted messages: ${(error as Error).message}`);
        return 0;
      });
    if (orphans) this.logger.debug(`Deleted ${orphans} group row(s) of messages deleted elsewhere`);
    return total;
  }

  /** Claims and delivers one batch of due messages (one run at a time per node). */
  async deliverDue(): Promise<DeliveryReport> {
    if (!this.connection.leadership.isLeader()) return { ...EMPTY };
    return this.gate.runExclusive(() => this.deliverBatch());
  }

  private async deliverBatch(): Promise<DeliveryReport> {
    const started = monotonicMillis();
    const clockNow = await this.clock.bindable();
    const { rows, now } = await this.metrics.retry('claim', () =>
      this.connection.queries.claim(this.options.batchSize, clockNow, this.leaseMs),
    );
    this.databaseAnswered();
    const report: DeliveryReport = { ...EMPTY, claimed: rows.length };
    if (!rows.length) return report;
    if (Number.isFinite(now)) this.dbClock = { at: now, mono: started };
    for (const row of rows) this.claimed.set(row.id, row.nextRetry ?? now + this.leaseMs);
    this.startHeartbeat();
    try {
      return await this.deliverClaimed(rows, now, started, report);
    } finally {
      for (const row of rows) this.claimed.delete(row.id);
      if (!this.claimed.size) this.stopHeartbeat();
    }
  }

  private async deliverClaimed(
    rows: MessageRow[],
    now: number,
    started: number,
    report: DeliveryReport,
  ): Promise<DeliveryReport> {
    const groups = new Map<string, Item[]>();
    for (const row of rows) {
      const item = this.toItem(row);
      // The group stored at accept (strict order: the claim took a run from the group's head);
      // rows without one (a Java client's, or accepted before groupBy) are grouped in the batch.
      let key = row.group !== undefined ? `g:${row.group}` : `m:${row.id}`;
      if (row.group === undefined && item.message && this.options.groupBy) {
        try {
          key = `g:${String(this.options.groupBy(item.message))}`;
        } catch (error) {
          this.logger.warn(
            `groupBy threw for message '${row.id}' (${(error as Error).message}); delivering it alone`,
          );
        }
      }
      const group = groups.get(key);
      if (group) group.push(item);
      else groups.set(key, [item]);
    }

    const outcomes = await Promise.allSettled(
      [...groups.values()].map((items) => this.deliverGroup(items, now, started, report)),
    );
    // The last deletes of this batch (the others went while it ran), even if recording a failure
    // of another group hit a database error (that group's messages come back after their lease).
    await this.flush();
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected' && !this.databaseFailed(outcome.reason, 'recording an outcome')) {
        this.logger.error(
          `Could not record a delivery outcome: ${(outcome.reason as Error)?.message ?? outcome.reason}`,
        );
      }
    }
    this.metrics.batchDuration.record(monotonicMillis() - started);
    return report;
  }

  private toItem(row: MessageRow): Item {
    try {
      const message: InboxMessage = {
        id: row.id,
        type: {
          ...(row.namespace !== null ? { namespace: row.namespace } : {}),
          name: row.name,
          ...(row.revision !== null ? { revision: row.revision } : {}),
        },
        encoding: apiEncoding(row.encoding) ?? (row.encoding as PayloadEncoding),
        payload: decodePayload(row.id, row.encoding, row.payload),
        inserted: new Date(row.inserted),
        ...(row.ttl !== null ? { ttl: row.ttl } : {}),
        ...(row.expiration !== null ? { expiration: new Date(row.expiration) } : {}),
        retries: row.retries,
      };
      return { row, message };
    } catch (decodeError) {
      return { row, decodeError };
    }
  }

  /** Delivers one group in INSERTED order; 'fail-first' stops at the first failure. */
  private async deliverGroup(
    items: Item[],
    claimedAt: number,
    started: number,
    report: DeliveryReport,
  ): Promise<void> {
    for (let i = 0; i < items.length; i++) {
      const handler = items[i].message ? this.registry.find(items[i].message!.type) : undefined;
      const slots = handler && !items[i].decodeError ? await this.acquireSlots(handler) : undefined;
      const hold: { untilDeleted?: Promise<void> } = {};
      try {
        if (!(await this.deliverItem(items, i, handler, claimedAt, started, report, hold))) return;
      } finally {
        slots?.handler();
        if (hold.untilDeleted) void hold.untilDeleted.finally(slots?.node);
        else slots?.node();
      }
    }
  }

  /** Delivers the i-th message of a group; false when the rest of the group must not follow now. */
  private async deliverItem(
    items: Item[],
    i: number,
    handler: RegisteredHandler | undefined,
    claimedAt: number,
    started: number,
    report: DeliveryReport,
    hold: { untilDeleted?: Promise<void> },
  ): Promise<boolean> {
    if (!this.running) {
      // Shutting down: what this group has not started goes back to the other nodes now.
      report.skipped += items.length - i;
      await this.handBack(this.stillClaimed(items.slice(i)));
      return false;
    }
    const { row, message, decodeError } = items[i];
    // The database time of the claim plus what has passed locally since: expiry is checked
    // right before each delivery, not only when the batch was selected.
    const now = claimedAt + (monotonicMillis() - started);
    if (row.expiration !== null && row.expiration <= now) {
      report.expired++;
      this.claimed.delete(row.id); // left for the cleanup
      return true;
    }
    if (message && !handler) {
      report.unhandled++;
      this.claimed.delete(row.id);
      await this.unhandled(row);
      if (this.options.batchMode === 'fail-first') {
        await this.skipRest(items.slice(i + 1), this.unhandledMs, report);
        return false;
      }
      return true;
    }
    if (!this.claimed.has(row.id)) {
      // The claim is lost (the heartbeats could not keep it): another node may be delivering
      // it already, and the rest of its group after it. Leave them.
      report.skipped += items.length - i;
      return false;
    }
    const controller = new AbortController();
    this.running_.add(controller);
    this.inHand.set(row.id, controller);
    try {
      if (decodeError) throw decodeError;
      await this.withinLimit(
        () => handler!.handle(message!, { signal: controller.signal }),
        row.id,
        controller,
      );
      if (controller.signal.aborted) throw controller.signal.reason;
      report.delivered++;
      hold.untilDeleted = this.complete(row.id);
      this.metrics.delivered.add(1);
    } catch (error) {
      const reason: unknown = controller.signal.reason;
      if (reason instanceof InboxShutdownError) return false; // handed back
      if (reason instanceof InboxClaimLostError) {
        // Not ours any more: no failure recorded, and the rest of the group is not started
        // ahead of it (left to the node that has it, or to their own lease).
        report.skipped += items.length - i - 1;
        return false;
      }
      this.claimed.delete(row.id);
      const delay = await this.failed(row, error, report);
      if (this.options.batchMode === 'fail-first') {
        // Later messages of the group wait as long as the failed one, so they come after it.
        await this.skipRest(items.slice(i + 1), delay ?? 0, report);
        return false;
      }
    } finally {
      this.running_.delete(controller);
      this.inHand.delete(row.id);
    }
    return true;
  }

  /**
   * Waits for the handler at most `handlerTimeout` (default the visibility timeout; 0: no limit),
   * or until its signal aborts (claim lost, shutdown). A handler that takes longer counts as a
   * failed attempt (with backoff, then parking), so a stuck message cannot hold the loop; its
   * signal aborts.
   */
  private async withinLimit(work: () => unknown, id: string, controller: AbortController): Promise<void> {
    const ms = this.handlerMs;
    if (ms <= 0) {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(controller.signal.reason);
        controller.signal.addEventListener('abort', onAbort, { once: true });
        Promise.resolve()
          .then(work)
          .then(
            () => resolve(),
            (error: unknown) => reject(error),
          )
          .finally(() => controller.signal.removeEventListener('abort', onAbort));
      });
      return;
    }
    await withTimeout(
      work,
      ms,
      () => {
        const error =
          this.options.handlerTimeout === undefined
            ? new VisibilityTimeoutError(id, ms)
            : new HandlerTimeoutError(id, ms);
        controller.abort(error);
        throw error;
      },
      { signal: controller.signal },
    );
  }

  /** The ids among these whose claim this node still holds (a lost one is not ours to release). */
  private stillClaimed(items: readonly Item[]): string[] {
    return items.map((item) => item.row.id).filter((id) => this.claimed.has(id));
  }

  private async skipRest(rest: Item[], delayMs: number, report: DeliveryReport): Promise<void> {
    if (!rest.length) return;
    report.skipped += rest.length;
    const now = await this.clock.bindable();
    const ids = this.stillClaimed(rest);
    if (!ids.length) return;
    for (const id of ids) this.claimed.delete(id);
    await this.metrics.retry('release', () => this.connection.queries.release(ids, delayMs, now));
  }

  private async unhandled(row: MessageRow): Promise<void> {
    const type = [row.namespace, row.name, row.revision].filter((p) => p !== null).join(':');
    this.metrics.unhandled.add(1, { type });
    if (!this.warnedTypes.has(type)) {
      this.warnedTypes.add(type);
      this.logger.warn(
        `No @InboxHandler for message type '${type}' (message '${row.id}'); it stays in the inbox`,
      );
    }
    const now = await this.clock.bindable();
    await this.metrics.retry('release', () =>
      this.connection.queries.release([row.id], this.unhandledMs, now, `No @InboxHandler for type '${type}'`),
    );
  }

  /** Records a failed attempt; returns the retry delay, or undefined when the message was parked. */
  private async failed(row: MessageRow, error: unknown, report: DeliveryReport): Promise<number | undefined> {
    const delay = nextRetryDelay(this.backoff, row.retries);
    const text = errorText(error);
    const now = await this.clock.bindable();
    const applied = await this.metrics.retry('failure', () =>
      this.connection.queries.recordFailure(row.id, row.retries, text, delay, now),
    );
    this.metrics.failed.add(1);
    report.failed++;
    if (delay === undefined && applied) {
      report.parked++;
      this.metrics.parked.add(1);
      this.logger.warn(
        `Message '${row.id}' parked after ${row.retries + 1} failed attempt(s): ${firstLine(text)}`,
      );
    } else {
      this.logger.debug(`Message '${row.id}' failed (attempt ${row.retries + 1}); retry in ${delay} ms`);
    }
    return delay;
  }
}

/** A heartbeat got no answer within the heartbeat interval (its statement may still be waiting). */
class HeartbeatNoAnswerError extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'HeartbeatNoAnswerError';
  }
}

class VisibilityTimeoutError extends Error {
  constructor(id: string, ms: number) {
    super(
      `Handler for message '${id}' did not finish within the visibility timeout (${ms} ms; set handlerTimeout to allow longer)`,
    );
    this.name = 'VisibilityTimeoutError';
  }
}

class HandlerTimeoutError extends Error {
  constructor(id: string, ms: number) {
    super(`Handler for message '${id}' did not finish within handlerTimeout (${ms} ms)`);
    this.name = 'HandlerTimeoutError';
  }
}

/** The handler's signal reason when the node shut down before it finished. */
class InboxShutdownError extends Error {
  constructor(graceMs: number) {
    super(`The inbox is shutting down and the handler did not finish within shutdownGrace (${graceMs} ms)`);
    this.name = 'InboxShutdownError';
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0];
}

/** Message and stack, whole: ERROR is the seed's unbounded text column. */
export function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const head = `${error.name}: ${error.message}`;
  return error.stack ? (error.stack.startsWith(head) ? error.stack : `${head}\n${error.stack}`) : head;
}
