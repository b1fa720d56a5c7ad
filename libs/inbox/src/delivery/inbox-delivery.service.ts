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
  keepProcessAlive,
  type DeadlineQueue,
  monotonicMillis,
  parseDuration,
  withTimeout,
} from '@holdfast/core/kit';
import { ModuleRef } from '@nestjs/core';
import { Mutex } from 'async-mutex';
import { apiEncoding, decodePayload } from '../acceptor/message-codec';
import { InboxClaimLostError } from '../errors';
import { InboxHandlerRegistry, type RegisteredHandler } from '../handler/inbox-handler.registry';
import { InboxClock } from '../inbox.clock';
import { INBOX_OPTIONS } from '../inbox.constants';
import type { InboxMessage, MessageType, PayloadEncoding } from '../inbox-message';
import { InboxMetrics } from '../inbox.metrics';
import { ResolvedInboxOptions } from '../inbox.options';
import type { MessageRow } from '../store/cor-message.queries';
import { InboxConnection } from '../store/inbox-connection';
import { nextRetryDelay, type BackoffPolicy } from './backoff';
import { ClaimLedger } from './claim-ledger';
import { DatabaseOutage } from './database-outage';
import { ExpiryCleanup } from './expiry-cleanup';
import { errorText, handlerDeadlines, HandlerRun, HandlerSlots, InboxShutdownError } from './handler-run';

export { errorText } from './handler-run';

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

/** A claimed batch: its rows, the database clock then, and the local monotonic time it started. */
interface Claim {
  rows: MessageRow[];
  now: number;
  started: number;
}

interface Item {
  row: MessageRow;
  message?: InboxMessage;
  decodeError?: unknown;
}

/**
 * How far claims grow on a backlog, in multiples of `batchSize` (see claimBatch): 5 × the default
 * 100 is what graphile-worker's local queue fetches at once in its high-throughput setup.
 */
const CLAIM_GROWTH = 5;
/** The largest claim, as the largest `batchSize`: a statement's parameters stay well within limits. */
const MAX_CLAIM = 10_000;

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
 * small batches as it goes (ClaimLedger, which also renews the claims it holds), schedules
 * retries with backoff for what failed, parks what failed too often. Another batch follows at
 * once while batches come back full; otherwise it waits `pollInterval`. The expiry cleanup runs
 * beside it (ExpiryCleanup), and a database outage is logged once (DatabaseOutage).
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
  /** Lets the process end again: the delivery loop holds it while it runs (see keepProcessAlive). */
  private releaseProcess?: () => void;
  private cycle?: Promise<unknown>;
  private readonly graceMs: number;
  /** No delivery run in progress (a wake-up can start one at once). */
  private idle = true;
  /** An accept asked for a run while one was in progress: the next starts right after it. */
  private wakeRequested = false;
  /** The handler calls' time limit, on one timer (none without a limit). */
  private readonly deadlines: DeadlineQueue<HandlerRun> | undefined;
  /** Handler concurrency on this node, and per handler with its own limit. */
  private readonly slots: HandlerSlots;
  private readonly outage: DatabaseOutage;
  /** What this node has claimed and not finished: heartbeats, completion deletes, lost claims. */
  private readonly ledger: ClaimLedger;
  private readonly expiry: ExpiryCleanup;
  /** The next batch, claimed while a full one was delivered (see deliverBatch). */
  private prefetched?: Promise<Claim>;
  /**
   * How many messages the next claim asks for: `batchSize`, doubled after each claim that came
   * back full, up to CLAIM_GROWTH times `batchSize`, and `batchSize` again after one that did not
   * (see claimBatch).
   */
  private claimSize: number;
  /** Gives a node slot back once its message is deleted (see HandlerSlots). */
  private readonly releaseNodeSlot = () => this.slots.releaseNode();

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
    const handlerMs =
      options.handlerTimeout === undefined
        ? this.leaseMs
        : parseDuration(options.handlerTimeout, 'handlerTimeout');
    this.deadlines = handlerDeadlines(handlerMs, options.handlerTimeout !== undefined);
    const concurrency = options.concurrency ?? options.batchSize;
    this.slots = new HandlerSlots(concurrency);
    this.claimSize = options.batchSize;
    const r = options.retry;
    this.backoff = {
      maxRetries: r.maxRetries,
      initialDelay: parseDuration(r.initialDelay, 'retry.initialDelay'),
      multiplier: r.multiplier,
      maxDelay: parseDuration(r.maxDelay, 'retry.maxDelay'),
      jitter: r.jitter,
    };
    this.outage = new DatabaseOutage(this.logger, () => connection.queries.table);
    const timers = () => this.timers;
    this.ledger = new ClaimLedger({
      connection,
      clock,
      metrics,
      outage: this.outage,
      logger: this.logger,
      timers,
      timerName: (what) => this.timerName(what),
      leaseMs: this.leaseMs,
      flushAt: Math.min(options.completionBatchSize, concurrency),
      flushMs: parseDuration(options.completionFlushInterval, 'completionFlushInterval'),
    });
    this.expiry = new ExpiryCleanup({
      connection,
      clock,
      metrics,
      options,
      outage: this.outage,
      logger: this.logger,
      timers,
      timerName: () => this.timerName('cleanup'),
      cleanupMs: this.cleanupMs,
      running: () => this.running,
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.options.deliver) return;
    await this.connection.leadership.start();
    this.timers = new HoldfastTimers(findSchedulerRegistry(this.moduleRef));
    this.running = true;
    this.releaseProcess = keepProcessAlive(`inbox delivery (${this.connection.queries.table})`);
    this.schedulePoll(this.pollMs);
    this.expiry.schedule(this.cleanupMs);
  }

  /**
   * Drains: no new claim and no new handler from now on; what this node claimed and has not
   * started is handed back at once (due now, so another node takes it at its next poll); running
   * handlers get `shutdownGrace` to finish, then their signal aborts and their messages are
   * handed back too. Then it leaves the leader mutex, before TypeORM closes the DataSource.
   */
  async beforeApplicationShutdown(): Promise<void> {
    try {
      await this.drain();
    } finally {
      // After app.close() nothing of the inbox holds the process, whatever the drain met.
      this.releaseProcess?.();
      this.releaseProcess = undefined;
    }
  }

  private async drain(): Promise<void> {
    this.running = false;
    // No more polls or cleanups; heartbeats and completion flushes go on while handlers drain.
    this.timers.clear(this.timerName('poll'));
    this.timers.clear(this.timerName('cleanup'));
    const handedBack = this.handBackPrefetched();
    const finished = Promise.all([this.cycle?.catch(() => undefined), this.gate.waitForUnlock()]);
    if ((await withTimeout(finished, this.graceMs, () => 'timeout' as const)) === 'timeout') {
      const left = this.ledger.ids();
      this.ledger.abortRunning(new InboxShutdownError(this.graceMs));
      await this.ledger
        .handBack(left)
        .catch((error) =>
          this.logger.warn(`Could not hand back ${left.length} message(s): ${(error as Error).message}`),
        );
      this.logger.warn(
        `${left.length} message(s) still running after shutdownGrace (${this.graceMs} ms): their handlers were aborted ` +
          `and the messages handed back to other nodes`,
      );
    }
    await handedBack;
    await this.ledger.flush().catch(() => undefined);
    this.ledger.stop();
    this.deadlines?.clear();
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

  /** `holdfast:inbox:<what>:<table>`, this node's timers in the SchedulerRegistry. */
  private timerName(what: 'poll' | 'cleanup' | 'heartbeat' | 'flush'): string {
    return `holdfast:inbox:${what}:${this.connection.queries.table}`;
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
      this.cycle = this.deliverNext(true).then(
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
          if (!this.outage.failed(error, 'a delivery run'))
            this.logger.error(`Delivery run failed: ${(error as Error).message}`, (error as Error).stack);
          this.schedulePoll(this.pollMs);
        },
      );
    });
  }

  /**
   * Deletes every expired message in bounded batches until none is left (see ExpiryCleanup).
   * Runs now on this node when called (on a delivering node); the schedule calls it on one node
   * per tick for the whole cluster.
   */
  cleanupExpired(): Promise<number> {
    return this.expiry.run();
  }

  /**
   * Claims and delivers one batch of due messages (one run at a time per node); resolves once
   * what was delivered is deleted.
   */
  deliverDue(): Promise<DeliveryReport> {
    return this.deliverNext(false);
  }

  /**
   * `overlap`: a run of the delivery loop. It claims the next batch while it delivers a full one
   * (ungrouped), and returns before its last deletes are done (see deliverBatch).
   */
  private async deliverNext(overlap: boolean): Promise<DeliveryReport> {
    if (!this.connection.leadership.isLeader()) {
      await this.handBackPrefetched();
      return { ...EMPTY };
    }
    return this.gate.runExclusive(() => this.deliverBatch(overlap));
  }

  /**
   * Claims up to `claimSize` due messages; the ledger holds (and renews) them from then on. On a
   * backlog the claims grow (ungrouped): a claim costs a round trip and a statement whatever its
   * size, so a database 1 ms away or more delivers at the rate its claims come back, and larger
   * claims are fewer. The rows of a larger claim wait for handler slots, as a prefetched batch
   * does; once the backlog is gone the claims are `batchSize` again, so that nodes share what
   * comes in.
   */
  private async claimBatch(): Promise<Claim> {
    const size = this.claimSize;
    const started = monotonicMillis();
    const clockNow = await this.clock.bindable();
    const { rows, now } = await this.metrics.retry('claim', async () => {
      const lease = await this.ledger.nextLease(clockNow, () => this.clock.now());
      try {
        return await this.connection.queries.claim(size, clockNow, lease);
      } catch (error) {
        this.ledger.claimUnanswered(lease.until);
        throw error;
      }
    });
    this.outage.answered();
    // Grouped, a group's next message is ready only once the one before it is gone: no growth.
    const grow = rows.length >= size && this.options.groupBy === undefined;
    this.claimSize = grow
      ? Math.min(size * 2, this.options.batchSize * CLAIM_GROWTH, MAX_CLAIM)
      : this.options.batchSize;
    if (rows.length) this.ledger.take(rows, now, started);
    return { rows, now, started };
  }

  private async deliverBatch(overlap: boolean): Promise<DeliveryReport> {
    const next = this.prefetched;
    this.prefetched = undefined;
    const { rows, now, started } = await (next ?? this.claimBatch());
    const report: DeliveryReport = { ...EMPTY, claimed: rows.length };
    if (!rows.length) return report;
    if (
      overlap &&
      rows.length >= this.options.batchSize &&
      this.options.groupBy === undefined &&
      this.running
    ) {
      // A full batch: more are waiting. The next batch is claimed now, while this one runs (a
      // local queue of one batch), so that the database's work and the handlers' overlap. Its
      // rows wait for handler slots; a shutdown hands them back unstarted. Not when grouped: a
      // group's next message is only ready once the one before it is gone.
      const prefetch = this.claimBatch();
      prefetch.catch(() => undefined); // a failed claim fails the run that takes it
      this.prefetched = prefetch;
    }
    let lastDeletes: Promise<void> | undefined;
    try {
      const delivered = await this.deliverClaimed(rows, now, started, report);
      // The last deletes of this batch (the others went while it ran). In the loop, ungrouped,
      // the next claim goes out beside them: its rows are other rows (these are leased), and its
      // handlers wait for the slots these deletes give back. Grouped, the next claim waits.
      lastDeletes = this.ledger.flush().finally(() => this.ledger.finish(rows));
      if (!overlap || this.options.groupBy !== undefined || !this.running) await lastDeletes;
      else
        lastDeletes.catch((error) =>
          this.logger.error(`Could not delete delivered messages: ${(error as Error).message}`),
        );
      return delivered;
    } finally {
      if (!lastDeletes) await this.ledger.flush().finally(() => this.ledger.finish(rows));
    }
  }

  /** The batch claimed ahead, not started: due again at once, for any node (shutdown, lost leadership). */
  private async handBackPrefetched(): Promise<void> {
    const next = this.prefetched;
    this.prefetched = undefined;
    const claim = await next?.catch(() => undefined);
    if (!claim?.rows.length) return;
    const ids = this.ledger.stillHeld(claim.rows.map((row) => row.id));
    try {
      await this.ledger.handBack(ids);
    } catch (error) {
      this.logger.warn(`Could not hand back ${ids.length} message(s): ${(error as Error).message}`);
    } finally {
      this.ledger.finish(claim.rows);
    }
  }

  private async deliverClaimed(
    rows: MessageRow[],
    now: number,
    started: number,
    report: DeliveryReport,
  ): Promise<DeliveryReport> {
    const groups = this.groupsOf(rows);
    // A group whose failure could not be recorded (a database error) comes back after its lease.
    const outcomes = await Promise.allSettled(
      groups.map((items) => this.deliverGroup(items, now, started, report)),
    );
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected' && !this.outage.failed(outcome.reason, 'recording an outcome')) {
        this.logger.error(
          `Could not record a delivery outcome: ${(outcome.reason as Error)?.message ?? outcome.reason}`,
        );
      }
    }
    this.metrics.batchDuration.record(monotonicMillis() - started);
    return report;
  }

  /**
   * The batch's rows as groups in delivery order: a group stored at accept (strict order: the
   * claim took a run from the group's head); rows without one (a Java client's, or accepted
   * before groupBy) are grouped in the batch by `groupBy`; without `groupBy`, each row alone.
   */
  private groupsOf(rows: readonly MessageRow[]): Item[][] {
    const groupBy = this.options.groupBy;
    if (!groupBy && rows.every((row) => row.group === undefined))
      return rows.map((row) => [this.toItem(row)]);
    const groups = new Map<string, Item[]>();
    for (const row of rows) {
      const item = this.toItem(row);
      let key = row.group !== undefined ? `g:${row.group}` : `m:${row.id}`;
      if (row.group === undefined && item.message && groupBy) {
        try {
          key = `g:${String(groupBy(item.message))}`;
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
    return [...groups.values()];
  }

  private toItem(row: MessageRow): Item {
    try {
      // Optional keys are left out, not set to undefined (built without spreads: once per message).
      const { namespace, name, revision } = row;
      const type: MessageType =
        namespace !== null
          ? revision !== null
            ? { namespace, name, revision }
            : { namespace, name }
          : revision !== null
            ? { name, revision }
            : { name };
      const message: InboxMessage = {
        id: row.id,
        type,
        encoding: apiEncoding(row.encoding) ?? (row.encoding as PayloadEncoding),
        payload: decodePayload(row.id, row.encoding, row.payload),
        inserted: new Date(row.inserted),
        retries: row.retries,
      };
      if (row.ttl !== null) message.ttl = row.ttl;
      if (row.expiration !== null) message.expiration = new Date(row.expiration);
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
      const slotted = handler !== undefined && !items[i].decodeError;
      if (slotted && !this.slots.tryAcquire(handler)) await this.slots.acquire(handler);
      const hold = { untilDeleted: false };
      try {
        if (!(await this.deliverItem(items, i, handler, claimedAt, started, report, hold))) return;
      } finally {
        if (slotted) {
          this.slots.releaseHandler(handler);
          // The node's slot comes back once the message is deleted (see HandlerSlots), set up
          // by deliverItem when it completed the message.
          if (!hold.untilDeleted) this.slots.releaseNode();
        }
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
    hold: { untilDeleted: boolean },
  ): Promise<boolean> {
    if (!this.running) {
      // Shutting down: what this group has not started goes back to the other nodes now.
      report.skipped += items.length - i;
      await this.ledger.handBack(this.stillHeld(items.slice(i)));
      return false;
    }
    const { row, message, decodeError } = items[i];
    // The database time of the claim plus what has passed locally since: expiry is checked
    // right before each delivery, not only when the batch was selected.
    if (row.expiration !== null && row.expiration <= claimedAt + (monotonicMillis() - started)) {
      report.expired++;
      this.ledger.drop(row.id); // left for the cleanup
      return true;
    }
    if (message && !handler) {
      report.unhandled++;
      this.ledger.drop(row.id);
      await this.unhandled(row);
      if (this.options.batchMode === 'fail-first') {
        await this.skipRest(items.slice(i + 1), this.unhandledMs, report);
        return false;
      }
      return true;
    }
    if (!this.ledger.holds(row.id)) {
      // The claim is lost (the heartbeats could not keep it): another node may be delivering
      // it already, and the rest of its group after it. Leave them.
      report.skipped += items.length - i;
      return false;
    }
    const run = new HandlerRun(row.id);
    this.ledger.running(row.id, run);
    try {
      if (decodeError) throw decodeError;
      const call = run.execute(() => handler!.handle(message!, run.context), this.deadlines);
      if (call) await call;
      if (run.aborted) throw run.reason;
      report.delivered++;
      this.ledger.complete(row.id, this.releaseNodeSlot);
      hold.untilDeleted = true;
      this.metrics.delivered.add(1);
    } catch (error) {
      const reason: unknown = run.reason;
      if (reason instanceof InboxShutdownError) return false; // handed back
      if (reason instanceof InboxClaimLostError) {
        // Not ours any more: no failure recorded, and the rest of the group is not started
        // ahead of it (left to the node that has it, or to their own lease).
        report.skipped += items.length - i - 1;
        return false;
      }
      this.ledger.drop(row.id);
      const delay = await this.failed(row, error, report);
      if (this.options.batchMode === 'fail-first') {
        // Later messages of the group wait as long as the failed one, so they come after it.
        await this.skipRest(items.slice(i + 1), delay ?? 0, report);
        return false;
      }
    } finally {
      this.ledger.stopped(row.id);
    }
    return true;
  }

  /** The ids of these items whose claim this node still holds (a lost one is not ours to release). */
  private stillHeld(items: readonly Item[]): string[] {
    return this.ledger.stillHeld(items.map((item) => item.row.id));
  }

  private async skipRest(rest: Item[], delayMs: number, report: DeliveryReport): Promise<void> {
    if (!rest.length) return;
    report.skipped += rest.length;
    const now = await this.clock.bindable();
    const ids = this.stillHeld(rest);
    if (!ids.length) return;
    for (const id of ids) this.ledger.drop(id);
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

function firstLine(text: string): string {
  return text.split('\n', 1)[0];
}
