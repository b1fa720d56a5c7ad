import { Injectable } from '@nestjs/common';
import {
  holdfastMeter,
  sqlRetryCounter,
  withTransientRetry,
  type TransientRetry,
  type MetricCounter,
  type MetricHistogram,
} from '@holdfast/core';

/** OpenTelemetry instruments of the inbox (no-ops until the application registers an SDK). */
@Injectable()
export class InboxMetrics {
  private readonly meter = holdfastMeter('inbox');
  readonly accepted: MetricCounter = this.meter.createCounter('holdfast.inbox.accepted', {
    description: 'Messages stored by MessageAcceptor',
  });
  readonly duplicates: MetricCounter = this.meter.createCounter('holdfast.inbox.duplicates', {
    description: 'Accepted ids that already existed (nothing changed)',
  });
  readonly delivered: MetricCounter = this.meter.createCounter('holdfast.inbox.delivered', {
    description: 'Messages a handler processed successfully',
  });
  readonly failed: MetricCounter = this.meter.createCounter('holdfast.inbox.failed', {
    description: 'Failed delivery attempts',
  });
  readonly parked: MetricCounter = this.meter.createCounter('holdfast.inbox.parked', {
    description: 'Messages parked after maxRetries',
  });
  readonly unhandled: MetricCounter = this.meter.createCounter('holdfast.inbox.unhandled', {
    description: 'Claimed messages whose type has no @InboxHandler',
  });
  readonly expired: MetricCounter = this.meter.createCounter('holdfast.inbox.expired_deleted', {
    description: 'Expired messages deleted by cleanup',
  });
  readonly cleanupBatches: MetricCounter = this.meter.createCounter('holdfast.inbox.cleanup.batches', {
    description: 'Bounded delete statements run by the expiry cleanup',
  });
  private readonly retryCounter = sqlRetryCounter('inbox');
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

  private readonly onRetry = (retry: TransientRetry): void => {
    this.retriedStatements++;
    this.retryCounter(retry);
  };

  readonly batchDuration: MetricHistogram = this.meter.createHistogram('holdfast.inbox.batch.duration', {
    description: 'Time to deliver one claimed batch',
    unit: 'ms',
  });
}
