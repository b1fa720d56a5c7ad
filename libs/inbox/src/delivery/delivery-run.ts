import { Logger } from '@nestjs/common';
import { monotonicMillis } from '@holdfast/core/kit';
import { InboxClaimLostError, InboxShutdownError } from '../errors';
import type { RegisteredHandler } from '../explorer/inbox-handler.registry';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import type { MessageRow } from '../store/cor-message.rows';
import type { ClaimLedger } from './claim-ledger';
import type { DatabaseOutage } from './database-outage';
import { DELIVERY_LOG_CONTEXT, type DeliveryState } from './delivery-state';
import type { HandlerCalls } from './handler-calls';
import type { HandlerRun } from './handler-run';
import { groupsOf, type Item } from './message-groups';
import type { OutcomeRecorder } from './outcome-recorder';
import type { TraceSpan as Span } from '@holdfast/core/kit';

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

/** A report of `claimed` messages, nothing done yet. */
export function emptyReport(claimed = 0): DeliveryReport {
  return { claimed, delivered: 0, failed: 0, parked: 0, unhandled: 0, expired: 0, skipped: 0 };
}

/** A claimed batch: its rows, the database clock then, and the local monotonic time it started. */
export interface Claim {
  rows: MessageRow[];
  now: number;
  started: number;
  /**
   * Rows the claim took, those a rate limit gave back included (see RateLimiter): a claim that
   * came back full keeps the loop going even when its rows went back.
   */
  taken?: number;
}

/** What every run uses (DeliveryRuns, one per inbox). */
export interface DeliveryRunContext {
  readonly options: Pick<ResolvedInboxOptions, 'groupBy' | 'batchMode'>;
  /** The handlers' calls: slots, runs, spans. */
  readonly calls: HandlerCalls;
  readonly ledger: ClaimLedger;
  readonly recorder: OutcomeRecorder;
  readonly outage: DatabaseOutage;
  /** Not running once the node drains: what has not started goes back to the other nodes. */
  readonly state: DeliveryState;
}

const logger = new Logger(DELIVERY_LOG_CONTEXT);

/** After a message that was not delivered: the rest of its group follows now, or the group stops. */
type Outcome = 'go-on' | 'stop';
const GO_ON: Outcome = 'go-on';
const STOP: Outcome = 'stop';

/**
 * One claimed batch, delivered group by group (at most `concurrency` handlers at once, and a
 * handler's own `concurrency`); its report is what it did. Deletes of what succeeded go through
 * the ledger; failures, unhandled types and skipped messages through the recorder.
 */
export class DeliveryRun {
  readonly report: DeliveryReport;

  constructor(
    private readonly ctx: DeliveryRunContext,
    private readonly claim: Claim,
  ) {
    this.report = emptyReport(Math.max(claim.rows.length, claim.taken ?? 0));
  }

  async deliver(): Promise<DeliveryReport> {
    const { ctx } = this;
    const groups = groupsOf(this.claim.rows, ctx.options.groupBy, logger);
    // A group whose failure could not be recorded (a database error) comes back after its lease.
    // A message alone (no groupBy: all of them) is one call, without a loop around it.
    const outcomes = await Promise.allSettled(
      groups.map((items) => (items.length === 1 ? this.deliverItem(items, 0) : this.deliverGroup(items))),
    );
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected' && !ctx.outage.failed(outcome.reason, 'recording an outcome')) {
        logger.error(
          `Could not record a delivery outcome: ${(outcome.reason as Error)?.message ?? outcome.reason}`,
        );
      }
    }
    ctx.recorder.batchDelivered(this.claim.started);
    return this.report;
  }

  /** Delivers one group in INSERTED order; 'fail-first' stops at the first failure. */
  private async deliverGroup(items: readonly Item[]): Promise<void> {
    for (let i = 0; i < items.length; i++) if (!(await this.deliverItem(items, i))) return;
  }

  /**
   * Delivers the i-th message of a group, in a slot of its handler and one of the node; true when
   * the rest of the group follows now. A delivered message keeps the node's slot until it is
   * deleted (see HandlerSlots): the ledger gives it back then. One async call per message on the
   * way of a delivery (the other outcomes have their own methods).
   */
  private async deliverItem(items: readonly Item[], i: number): Promise<boolean> {
    const { ctx } = this;
    const { calls, ledger } = ctx;
    const { slots, tracing } = calls;
    const { row, message, decodeError } = items[i];
    const handler = message ? calls.find(message.type) : undefined;
    const slotted = handler !== undefined && !decodeError;
    if (slotted && !slots.tryAcquire(handler)) await slots.acquire(handler);
    let untilDeleted = false;
    try {
      const screened = this.screen(items, i, handler);
      if (screened !== undefined) return (await screened) === GO_ON;
      const run = calls.run(row);
      ledger.running(row.id, run);
      const span = tracing.process(row.id, row.retries, row.traceContext);
      try {
        if (decodeError) throw decodeError;
        const call = calls.call(run, span, handler!, message!);
        if (call) await call;
        if (run.aborted) throw run.reason;
        this.report.delivered++;
        ledger.complete(row.id, calls.releaseNodeSlot);
        ctx.recorder.delivered(row);
        untilDeleted = true;
        return true;
      } catch (error) {
        return (await this.failed(items, i, run, error, span)) === GO_ON;
      } finally {
        span?.end();
        ledger.stopped(row.id);
      }
    } finally {
      if (slotted) {
        slots.releaseHandler(handler);
        if (!untilDeleted) slots.releaseNode();
      }
    }
  }

  /**
   * What happens to the i-th message instead of its handler's call, if anything (undefined: the
   * call): the node is shutting down, the message expired, no handler takes its type, or the
   * claim was lost.
   */
  private screen(
    items: readonly Item[],
    i: number,
    handler: RegisteredHandler | undefined,
  ): Outcome | Promise<Outcome> | undefined {
    const { ctx, report } = this;
    const { ledger } = ctx;
    if (!ctx.state.running) {
      // Shutting down: what this group has not started goes back to the other nodes now.
      report.skipped += items.length - i;
      const rest = ledger.stillHeld(items.slice(i).map((item) => item.row.id));
      return ledger.handBack(rest).then(() => STOP);
    }
    const { row, message } = items[i];
    // The database time of the claim plus what has passed locally since: expiry is checked
    // right before each delivery, not only when the batch was selected.
    if (
      row.expiration !== null &&
      row.expiration <= this.claim.now + (monotonicMillis() - this.claim.started)
    ) {
      report.expired++;
      ledger.drop(row.id); // left for the cleanup
      return GO_ON;
    }
    if (message && !handler) return this.unhandled(items, i);
    if (!ledger.holds(row.id)) {
      // The claim is lost (the heartbeats could not keep it): another node may be delivering
      // it already, and the rest of its group after it. Leave them.
      report.skipped += items.length - i;
      return STOP;
    }
    return undefined;
  }

  /** A message whose type no handler takes: recorded for a later attempt. */
  private async unhandled(items: readonly Item[], i: number): Promise<Outcome> {
    const { ctx, report } = this;
    const { row } = items[i];
    report.unhandled++;
    ctx.ledger.drop(row.id);
    await ctx.recorder.unhandled(row);
    if (ctx.options.batchMode !== 'fail-first') return GO_ON;
    await this.skipRest(items.slice(i + 1), ctx.recorder.unhandledMs);
    return STOP;
  }

  /** The handler's call for the i-th message failed, or was given up (`run.reason`). */
  private async failed(
    items: readonly Item[],
    i: number,
    run: HandlerRun,
    error: unknown,
    span?: Span,
  ): Promise<Outcome> {
    const { ctx, report } = this;
    const reason: unknown = run.reason;
    if (reason instanceof InboxShutdownError) return STOP; // handed back
    if (reason instanceof InboxClaimLostError) {
      // Not ours any more: no failure recorded, and the rest of the group is not started
      // ahead of it (left to the node that has it, or to their own lease).
      report.skipped += items.length - i - 1;
      return STOP;
    }
    const { row } = items[i];
    ctx.ledger.drop(row.id);
    const { delay, parked } = await ctx.recorder.failed(row, error);
    ctx.calls.tracing.failed(span, row.id, error, { delay, parked });
    report.failed++;
    if (parked) report.parked++;
    if (ctx.options.batchMode === 'fail-first') {
      // Later messages of the group wait as long as the failed one, so they come after it.
      await this.skipRest(items.slice(i + 1), delay ?? 0);
      return STOP;
    }
    return GO_ON;
  }

  /** The rest of a group that stopped: counted as skipped, and given back for `delayMs`. */
  private async skipRest(rest: readonly Item[], delayMs: number): Promise<void> {
    if (!rest.length) return;
    this.report.skipped += rest.length;
    await this.ctx.recorder.releaseRest(
      rest.map((item) => item.row.id),
      delayMs,
    );
  }
}
