import type { Provider } from '@nestjs/common';
import { parseDuration, type DeadlineQueue } from '@holdfast/core/kit';
import { INBOX_OPTIONS } from '../inbox.tokens';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import type { BackoffPolicy } from './backoff';
import { handlerDeadlines, type HandlerRun } from './handler-run';

/**
 * How far claims grow on a backlog, in multiples of `batchSize` (see BatchClaimer): 1,000 at the
 * default 100. A node's claims go out one after the other (one claimed ahead), so with the
 * database a few milliseconds away a node delivers about one claim per round trip: at 5 ms each
 * way, claims of 1,000 delivered 1.76× graphile-worker where claims of 500 delivered 1.23×
 * (`npm run bench -- latency`, docs/benchmarks.md). On a backlog only: a short claim starts
 * again at `batchSize`.
 */
export const CLAIM_GROWTH = 10;
/** The largest claim, as the largest `batchSize`: a statement's parameters stay well within limits. */
export const MAX_CLAIM = 10_000;

/** The largest claim a node makes on a backlog: `CLAIM_GROWTH` × `batchSize`, at most `MAX_CLAIM`. */
export function largestClaim(batchSize: number): number {
  return Math.min(batchSize * CLAIM_GROWTH, MAX_CLAIM);
}

/**
 * A claim of at least this many means more may be waiting (the loop runs again at once, and
 * claims the next batch ahead): `batchSize`, or with `fairShare` a smaller `perKey`, since a
 * claim then takes at most `perKey` of each type (one hot type alone: `perKey` a claim).
 */
export function fullClaim(options: Pick<ResolvedInboxOptions, 'batchSize' | 'fairShare'>): number {
  return options.fairShare ? Math.min(options.batchSize, options.fairShare.perKey) : options.batchSize;
}

/** The delivery's options as numbers (milliseconds), parsed once when the module is built. */
export interface DeliverySettings {
  pollMs: number;
  leaseMs: number;
  cleanupMs: number;
  unhandledMs: number;
  graceMs: number;
  /** Handlers running at once on this node (`concurrency`, else twice the largest claim). */
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
  /**
   * `flushAt` on a database with one writer and no round trips (SQLite): by default a whole
   * largest claim, so one delete follows each claim, as the driver used by hand does. There a
   * delete runs synchronously and holds the one connection, so nothing runs beside it, and
   * every statement commits on its own (with better-sqlite3's default `synchronous = FULL`, a
   * flush of the WAL to disk): half-claim deletes only added a commit per claim.
   */
  flushAtOneWriter: number;
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
  // The defaults: a largest claim's worth of handler slots, and deletes of half of it. A slot is
  // held from a handler's start until its message's delete is answered (a crash then delivers
  // again at most `concurrency` started messages, see HandlerSlots), so a node delivers at most
  // `concurrency` messages per delete round trip; with deletes of half a claim, one half's delete
  // is in flight while the other half runs. Deletes of 100 beside 200 slots (the defaults before
  // 2026-11-27) cost PostgreSQL about a third more CPU per message (bench/latency.bench.ts).
  const largest = largestClaim(options.batchSize);
  const concurrency = options.concurrency ?? largest;
  const completionBatchSize = options.completionBatchSize ?? Math.ceil(largest / 2);
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
    flushAt: Math.min(completionBatchSize, Math.ceil(concurrency / 2)),
    flushAtOneWriter: Math.min(options.completionBatchSize ?? largest, concurrency),
    flushMs: parseDuration(options.completionFlushInterval, 'completionFlushInterval'),
    deadlines,
  };
}

/** The injection token of an inbox's DeliverySettings (one per InboxModule). */
export const DELIVERY_SETTINGS = Symbol('holdfast:inbox:delivery-settings');

/** DeliverySettings from the module's options, parsed when the module is built (bad options fail there). */
export const deliverySettingsProvider: Provider = {
  provide: DELIVERY_SETTINGS,
  useFactory: deliverySettings,
  inject: [INBOX_OPTIONS],
};
