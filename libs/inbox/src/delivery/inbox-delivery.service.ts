import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { findSchedulerRegistry, HoldfastTimers, monotonicMillis, parseDuration } from '@holdfast/core';
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

/** How long shutdown waits for the batch in progress. */
const SHUTDOWN_WAIT_MS = 10_000;

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
   * Stops the timers and waits (at most SHUTDOWN_WAIT_MS) for the batch in progress to finish and
   * delete what it delivered; what is still running after that is delivered again once its lease
   * ends. Then leaves the leader mutex, before TypeORM closes the DataSource.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.running = false;
    this.timers.clearAll();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), SHUTDOWN_WAIT_MS);
    });
    const finished = Promise.all([this.cycle?.catch(() => undefined), this.gate.waitForUnlock()]);
    if ((await Promise.race([finished, timeout])) === 'timeout') {
      this.logger.warn(
        `A delivery batch is still running after ${SHUTDOWN_WAIT_MS} ms; its messages are delivered again after their lease`,
      );
    }
    clearTimeout(timer);
    if (this.options.deliver) await this.connection.leadership.stop();
  }

  /** True when this node delivers now (always in competing mode; the mutex owner in leader mode). */
  isDelivering(): boolean {
    return this.options.deliver && this.connection.leadership.isLeader();
  }

  private schedulePoll(delay: number): void {
    if (!this.running) return;
    this.timers.set(`holdfast:inbox:poll:${this.connection.queries.table}`, delay, () => {
      this.cycle = this.deliverDue().then(
        (report) => this.schedulePoll(report.claimed >= this.options.batchSize ? 0 : this.pollMs),
        (error) => {
          this.logger.error(`Delivery run failed: ${(error as Error).message}`, (error as Error).stack);
          this.schedulePoll(this.pollMs);
        },
      );
    });
  }

  private scheduleCleanup(delay: number): void {
    if (!this.running) return;
    this.timers.set(`holdfast:inbox:cleanup:${this.connection.queries.table}`, delay, () => {
      this.cleanupExpired()
        .catch((error) =>
          this.logger.error(`Cleanup of expired messages failed: ${(error as Error).message}`),
        )
        .finally(() => this.scheduleCleanup(this.cleanupMs));
    });
  }

  /**
   * Deletes every expired message in bounded batches until none is left: each batch reads at
   * most `cleanupChunkSize` expired ids through the EXPIRATION index and deletes them in one
   * short autocommit statement, so nobody waits for more than one batch; the event loop gets a
   * turn between batches. Rows and batches go to the metrics. Returns how many were deleted.
   * Runs on the delivering node(s) only when scheduled.
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
      try {
        if (decodeError) throw decodeError;
        await withTimeout(handler!.handle(message!), leaseLeft, row.id);
        delivered.push(row.id);
        this.metrics.delivered.add(1);
      } catch (error) {
        const delay = await this.failed(row, error, report);
        if (this.options.batchMode === 'fail-first') {
          // Later messages of the group wait as long as the failed one, so they come after it.
          await this.skipRest(items.slice(i + 1), delay ?? 0, report);
          return;
        }
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

/**
 * Waits for the handler at most until the lease ends. A handler that takes longer counts as a
 * failed attempt (with backoff, then parking), so a stuck message cannot hold the loop.
 */
async function withTimeout(work: unknown, ms: number, id: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new VisibilityTimeoutError(id, ms)), ms);
    timer.unref();
  });
  try {
    await Promise.race([Promise.resolve(work), timeout]);
  } finally {
    clearTimeout(timer);
  }
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
