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
  monotonicMillis,
  parseDuration,
  withTimeout,
} from '@holdfast/core';
import { ModuleRef } from '@nestjs/core';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { Mutex } from 'async-mutex';
import { apiEncoding, decodePayload } from '../acceptor/message-codec';
import { InboxHandlerRegistry } from '../handler/inbox-handler.registry';
import { InboxClock } from '../inbox.clock';
import { INBOX_OPTIONS } from '../inbox.constants';
import type { InboxMessage, PayloadEncoding } from '../inbox-message';
import { InboxMetrics } from '../inbox.metrics';
import { ResolvedInboxOptions } from '../inbox.options';
import type { MessageRow } from '../store/cor-message.queries';
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
 * The delivery loop: claims a batch of due messages, delivers them group by group, deletes what
 * succeeded, schedules retries with backoff for what failed, parks what failed too often.
 * Another batch follows at once while batches come back full; otherwise it waits `pollInterval`.
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
  /** `holdfast:inbox:poll:<table>` and `holdfast:inbox:cleanup:<table>`, in the app's SchedulerRegistry. */
  private timers = new HoldfastTimers();
  private running = false;
  private cycle?: Promise<unknown>;
  private readonly graceMs: number;
  /** No delivery run in progress (a wake-up can start one at once). */
  private idle = true;
  /** An accept asked for a run while one was in progress: the next starts right after it. */
  private wakeRequested = false;
  /** Claimed by this node and not finished (delivered, failed, released): handed back at shutdown. */
  private readonly claimed = new Set<string>();
  /** The running handlers' abort controllers. */
  private readonly running_ = new Set<AbortController>();
  /** Who cleans at a scheduled tick (created with the first one). */
  private cleanupTicks?: CleanupTicks;

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
    this.timers.clearAll();
    const finished = Promise.all([this.cycle?.catch(() => undefined), this.gate.waitForUnlock()]);
    if ((await withTimeout(finished, this.graceMs, () => 'timeout' as const)) === 'timeout') {
      const left = [...this.claimed];
      for (const controller of this.running_) controller.abort(new InboxShutdownError(this.graceMs));
      await this.handBack(left).catch((error) =>
        this.logger.warn(`Could not hand back ${left.length} message(s): ${(error as Error).message}`),
      );
      this.logger.warn(
        `${left.length} message(s) still running after shutdownGrace (${this.graceMs} ms): their handlers were aborted ` +
          `and the messages handed back to other nodes`,
      );
    }
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

  /** True when this node delivers now (always in competing mode; the mutex owner in leader mode). */
  isDelivering(): boolean {
    return this.options.deliver && this.connection.leadership.isLeader();
  }

  private schedulePoll(delay: number): void {
    if (!this.running) return;
    this.timers.set(`holdfast:inbox:poll:${this.connection.queries.table}`, delay, () => {
      this.idle = false;
      this.wakeRequested = false;
      this.cycle = this.deliverDue().then(
        (report) => {
          this.idle = true;
          this.schedulePoll(report.claimed >= this.options.batchSize || this.wakeRequested ? 0 : this.pollMs);
        },
        (error) => {
          this.idle = true;
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
    this.timers.set(`holdfast:inbox:cleanup:${this.connection.queries.table}`, delay, () => {
      ticks
        .claim()
        .then((mine) => (mine ? this.cleanupExpired() : 0))
        .catch((error) =>
          this.logger.error(`Cleanup of expired messages failed: ${(error as Error).message}`),
        )
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
    const report: DeliveryReport = { ...EMPTY, claimed: rows.length };
    if (!rows.length) return report;
    for (const row of rows) this.claimed.add(row.id);
    try {
      return await this.deliverClaimed(rows, now, started, report);
    } finally {
      for (const row of rows) this.claimed.delete(row.id);
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
      let key = row.id;
      if (item.message && this.options.groupBy) {
        try {
          key = String(this.options.groupBy(item.message));
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

    const delivered: string[] = [];
    const outcomes = await Promise.allSettled(
      [...groups.values()].map((items) => this.deliverGroup(items, now, started, delivered, report)),
    );
    // Delete what was delivered even if recording a failure of another group hit a database
    // error (that group's messages come back after their lease).
    if (delivered.length) {
      await this.metrics.retry('delete', () => this.connection.queries.deleteDelivered(delivered));
    }
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') {
        this.logger.error(
          `Could not record a delivery outcome: ${(outcome.reason as Error)?.message ?? outcome.reason}`,
        );
      }
    }
    report.delivered = delivered.length;
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
    delivered: string[],
    report: DeliveryReport,
  ): Promise<void> {
    for (let i = 0; i < items.length; i++) {
      if (!this.running) {
        // Shutting down: what this group has not started goes back to the other nodes now.
        report.skipped += items.length - i;
        await this.handBack(items.slice(i).map((item) => item.row.id));
        return;
      }
      const { row, message, decodeError } = items[i];
      // The database time of the claim plus what has passed locally since: expiry is checked
      // right before each delivery, not only when the batch was selected.
      const now = claimedAt + (monotonicMillis() - started);
      if (row.expiration !== null && row.expiration <= now) {
        report.expired++;
        continue;
      }
      const handler = message ? this.registry.find(message.type) : undefined;
      if (message && !handler) {
        report.unhandled++;
        await this.unhandled(row);
        if (this.options.batchMode === 'fail-first') {
          await this.skipRest(items.slice(i + 1), this.unhandledMs, report);
          return;
        }
        continue;
      }
      const leaseLeft = this.leaseMs - (monotonicMillis() - started);
      if (leaseLeft <= 0) {
        // The lease is over: another node may be delivering it already. Leave it.
        report.skipped += items.length - i;
        return;
      }
      const controller = new AbortController();
      this.running_.add(controller);
      try {
        if (decodeError) throw decodeError;
        await withinLease(
          () => handler!.handle(message!, { signal: controller.signal }),
          leaseLeft,
          row.id,
          controller,
        );
        if (controller.signal.aborted) throw controller.signal.reason;
        delivered.push(row.id);
        this.metrics.delivered.add(1);
      } catch (error) {
        if (controller.signal.reason instanceof InboxShutdownError) return; // handed back
        const delay = await this.failed(row, error, report);
        if (this.options.batchMode === 'fail-first') {
          // Later messages of the group wait as long as the failed one, so they come after it.
          await this.skipRest(items.slice(i + 1), delay ?? 0, report);
          return;
        }
      } finally {
        this.running_.delete(controller);
      }
    }
  }

  private async skipRest(rest: Item[], delayMs: number, report: DeliveryReport): Promise<void> {
    if (!rest.length) return;
    report.skipped += rest.length;
    const now = await this.clock.bindable();
    const ids = rest.map((r) => r.row.id);
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

class VisibilityTimeoutError extends Error {
  constructor(id: string, ms: number) {
    super(
      `Handler for message '${id}' did not finish within the visibility timeout (${ms} ms left of the lease)`,
    );
    this.name = 'VisibilityTimeoutError';
  }
}

/** The handler's signal reason when the node shut down before it finished. */
class InboxShutdownError extends Error {
  constructor(graceMs: number) {
    super(`The inbox is shutting down and the handler did not finish within shutdownGrace (${graceMs} ms)`);
    this.name = 'InboxShutdownError';
  }
}

/**
 * Waits for the handler at most until the lease ends, or until its signal aborts (shutdown). A
 * handler that takes longer counts as a failed attempt (with backoff, then parking), so a stuck
 * message cannot hold the loop; its signal aborts.
 */
async function withinLease(
  work: () => unknown,
  ms: number,
  id: string,
  controller: AbortController,
): Promise<void> {
  await withTimeout(
    work,
    ms,
    () => {
      const error = new VisibilityTimeoutError(id, ms);
      controller.abort(error);
      throw error;
    },
    { signal: controller.signal },
  );
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
