import { Injectable } from '@nestjs/common';
import { declareMetrics, sqlRetryCounter, withTransientRetry, type TransientRetry } from '@holdfast/core/kit';

/** The message type attribute (namespaced, as OpenTelemetry's conventions ask). */
const MESSAGE_TYPE = 'holdfast.message.type';

/** OpenTelemetry instruments of the inbox (no-ops until the application registers an SDK). */
@Injectable()
export class InboxMetrics {
  private readonly instruments = declareMetrics('inbox', {
    accepted: {
      kind: 'counter',
      name: 'accepted',
      unit: '{message}',
      description: 'Messages stored by MessageAcceptor',
    },
    duplicates: {
      kind: 'counter',
      name: 'duplicates',
      unit: '{message}',
      description: 'Accepted ids that already existed (nothing changed)',
    },
    delivered: {
      kind: 'counter',
      name: 'delivered',
      unit: '{message}',
      description: 'Messages a handler processed successfully',
    },
    failed: {
      kind: 'counter',
      name: 'failed',
      unit: '{attempt}',
      description: 'Failed delivery attempts',
    },
    parked: {
      kind: 'counter',
      name: 'parked',
      unit: '{message}',
      description: 'Messages parked after maxRetries',
    },
    unhandled: {
      kind: 'counter',
      name: 'unhandled',
      unit: '{message}',
      description: 'Claimed messages whose type has no @InboxHandler',
      attributes: [MESSAGE_TYPE],
    },
    expired: {
      kind: 'counter',
      name: 'cleanup.rows',
      unit: '{row}',
      description: 'Expired messages deleted by the cleanup',
    },
    cleanupBatches: {
      kind: 'counter',
      name: 'cleanup.batches',
      unit: '{statement}',
      description: 'Bounded delete statements run by the expiry cleanup',
    },
    cleanupSkipped: {
      kind: 'counter',
      name: 'cleanup.skipped',
      unit: '{tick}',
      description: 'Scheduled cleanup ticks left to the node that claimed the tick (or the leader)',
    },
    batchDuration: {
      kind: 'histogram',
      name: 'batch.duration',
      unit: 's',
      description: 'Time to deliver one claimed batch',
    },
  });
  readonly accepted = this.instruments.accepted;
  readonly duplicates = this.instruments.duplicates;
  readonly delivered = this.instruments.delivered;
  readonly failed = this.instruments.failed;
  readonly parked = this.instruments.parked;
  readonly expired = this.instruments.expired;
  readonly cleanupBatches = this.instruments.cleanupBatches;
  private readonly retryCounter = sqlRetryCounter('inbox');
  /** Scheduled cleanup ticks of this node: cleaned (it claimed the tick) and skipped (another node did). */
  cleanupTicks = 0;
  cleanupSkips = 0;
  /** SQL work of this node retried after a deadlock, serialization failure or lock wait, so far. */
  retriedStatements = 0;

  /**
   * Runs one autocommit statement or one whole transaction of the inbox, retrying deadlock
   * victims and serialization failures (core's bounded, jittered retry), counted in
   * `holdfast.inbox.sql.retries` by `operation`.
   */
  retry<T>(operation: string, work: () => Promise<T>): Promise<T> {
    return withTransientRetry(work, { operation, onRetry: this.onRetry });
  }

  /** One claimed batch delivered in `ms` milliseconds (recorded in seconds). */
  batchDelivered(ms: number): void {
    this.instruments.batchDuration.record(ms / 1000);
  }

  /** A claimed message of `type` (its label, `namespace:name@revision`) that no handler takes. */
  unhandledMessage(type: string): void {
    this.instruments.unhandled.add(1, { [MESSAGE_TYPE]: type });
  }

  cleanupTickRun(): void {
    this.cleanupTicks++;
  }

  cleanupTickSkipped(): void {
    this.cleanupSkips++;
    this.instruments.cleanupSkipped.add(1);
  }

  private readonly onRetry = (retry: TransientRetry): void => {
    this.retriedStatements++;
    this.retryCounter(retry);
  };
}
