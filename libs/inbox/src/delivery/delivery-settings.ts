import { parseDuration, type DeadlineQueue } from '@holdfast/core/kit';
import type { ResolvedInboxOptions } from '../inbox.options';
import type { BackoffPolicy } from './backoff';
import { handlerDeadlines, type HandlerRun } from './handler-run';

/**
 * The default `concurrency`, in multiples of `batchSize`. A node's slot is held from a handler's
 * start until its message's delete is answered (a crash then delivers again at most `concurrency`
 * started messages, see HandlerSlots), so a node delivers at most `concurrency` messages per
 * delete round trip. With twice the batch, one batch of slots waits for its delete while the
 * other runs: deletes of `batchSize` go out two at a time, and a database a few milliseconds
 * away (or a busy one, whose answers come late) no longer halves the rate.
 */
export const DEFAULT_CONCURRENCY_PER_BATCH = 2;

/** The delivery's options as numbers (milliseconds), parsed once when the service is built. */
export interface DeliverySettings {
  pollMs: number;
  leaseMs: number;
  cleanupMs: number;
  unhandledMs: number;
  graceMs: number;
  /** Handlers running at once on this node (`concurrency`, else twice the `batchSize`). */
  concurrency: number;
  backoff: BackoffPolicy;
  /**
   * A completion flush starts as soon as this many delivered messages wait for their delete:
   * `completionBatchSize`, at most half the node's concurrency. A delivered message keeps its
   * node slot until its delete is done (see HandlerSlots): with half the slots in one delete,
   * the other half run meanwhile and make the next one, so a database far away costs each
   * slot one round trip per message rather than the whole node waiting on each delete.
   */
  flushAt: number;
  flushMs: number;
  /** The handler calls' time limit, on one timer (none without a limit). */
  deadlines: DeadlineQueue<HandlerRun> | undefined;
}

/** Parses the durations of `options` (each error names its option). */
export function deliverySettings(options: ResolvedInboxOptions): DeliverySettings {
  // Parsed in this order, so that the first bad option is the one reported, as before.
  const pollMs = parseDuration(options.pollInterval, 'pollInterval');
  const leaseMs = parseDuration(options.visibilityTimeout, 'visibilityTimeout');
  const cleanupMs = parseDuration(options.cleanupInterval, 'cleanupInterval');
  const unhandledMs = parseDuration(options.unhandledDelay, 'unhandledDelay');
  const graceMs = parseDuration(options.shutdownGrace, 'shutdownGrace');
  const handlerMs =
    options.handlerTimeout === undefined ? leaseMs : parseDuration(options.handlerTimeout, 'handlerTimeout');
  const deadlines = handlerDeadlines(handlerMs, options.handlerTimeout !== undefined);
  const concurrency = options.concurrency ?? options.batchSize * DEFAULT_CONCURRENCY_PER_BATCH;
  const r = options.retry;
  const backoff: BackoffPolicy = {
    maxRetries: r.maxRetries,
    initialDelay: parseDuration(r.initialDelay, 'retry.initialDelay'),
    multiplier: r.multiplier,
    maxDelay: parseDuration(r.maxDelay, 'retry.maxDelay'),
    jitter: r.jitter,
  };
  return {
    pollMs,
    leaseMs,
    cleanupMs,
    unhandledMs,
    graceMs,
    concurrency,
    backoff,
    flushAt: Math.min(options.completionBatchSize, Math.ceil(concurrency / 2)),
    flushMs: parseDuration(options.completionFlushInterval, 'completionFlushInterval'),
    deadlines,
  };
}
