import { performance } from 'node:perf_hooks';
import { Injectable } from '@nestjs/common';
import { declareMetrics, type MetricAttributes } from '@holdfast/core/kit';

/** The attributes of the failover's instruments (namespaced, as OpenTelemetry's conventions ask). */
const FAILOVER = 'holdfast.failover.name';
const OUTCOME = 'holdfast.outcome';
const OPERATION = 'holdfast.operation';
const CAUSE = 'holdfast.cause';
const PAYLOAD_CLASS = 'holdfast.payload.class';

export type CallOutcome = 'success' | 'fresh' | 'recovered' | 'handler' | 'failed' | 'not-recoverable';

/** One failover's calls by outcome in this process, and its upstream's last error. */
export interface FailoverTally {
  readonly outcomes: Record<CallOutcome, number>;
  readonly lastError?: { message: string; at: Date };
}

function noOutcomes(): Record<CallOutcome, number> {
  return { success: 0, fresh: 0, recovered: 0, handler: 0, failed: 0, 'not-recoverable': 0 };
}

/**
 * A failover's tally. On the call path it only counts and keeps a reference to the last error:
 * the message and time are built when someone reads them (health, dashboard).
 */
class Tally implements FailoverTally {
  readonly outcomes: Record<CallOutcome, number> = noOutcomes();
  /** Attribute objects per outcome, built once: a call should not allocate one. */
  private readonly attributeSets: Partial<Record<CallOutcome, MetricAttributes>> = {};
  private error: unknown;
  /** performance.now() at the last error (the recovery's own reading, not one more). */
  private errorMono?: number;

  constructor(private readonly failover: string) {}

  get lastError(): { message: string; at: Date } | undefined {
    if (this.errorMono === undefined) return undefined;
    const error = this.error;
    return {
      message: error instanceof Error ? error.message : String(error),
      at: new Date(Date.now() - (performance.now() - this.errorMono)),
    };
  }

  upstreamFailed(error: unknown, mono: number): void {
    this.error = error;
    this.errorMono = mono;
  }

  attributes(outcome: CallOutcome): MetricAttributes {
    return (this.attributeSets[outcome] ??= { [FAILOVER]: this.failover, [OUTCOME]: outcome });
  }
}

/**
 * OpenTelemetry counters (a no-op without an SDK) plus in-process totals for health checks:
 * `holdfast.failover.calls{holdfast.failover.name, holdfast.outcome}`,
 * `holdfast.failover.store.errors{holdfast.operation}`, `holdfast.failover.writes.dropped`.
 */
@Injectable()
export class FailoverMetrics {
  private readonly instruments = declareMetrics('failover', {
    calls: {
      kind: 'counter',
      name: 'calls',
      unit: '{call}',
      description: 'Calls through @Failover methods, by outcome',
      attributes: [FAILOVER, OUTCOME],
    },
    storeErrors: {
      kind: 'counter',
      name: 'store.errors',
      unit: '{operation}',
      description: 'Store operations that failed (never seen by callers)',
      attributes: [OPERATION],
    },
    storeSkipped: {
      kind: 'counter',
      name: 'store.skipped',
      unit: '{operation}',
      description: 'Store operations skipped while the store was unreachable',
      attributes: [OPERATION],
    },
    writesDropped: {
      kind: 'counter',
      name: 'writes.dropped',
      unit: '{write}',
      description: 'Async writes dropped because too many were in flight',
    },
    writesRows: {
      kind: 'counter',
      name: 'writes.rows',
      unit: '{row}',
      description: 'Rows sent to the store by the writer',
    },
    slicesMissing: {
      kind: 'counter',
      name: 'slices.missing',
      unit: '{slice}',
      description: 'Scatter slices the upstream did not return (not stored)',
      attributes: [FAILOVER],
    },
    payloadsRefused: {
      kind: 'counter',
      name: 'payloads.refused',
      unit: '{value}',
      description: 'Values not stored because their class could not be rebuilt on recovery',
      attributes: [FAILOVER, PAYLOAD_CLASS],
    },
    bypassed: {
      kind: 'counter',
      name: 'bypassed',
      unit: '{call}',
      description:
        "Calls answered by the upstream alone because Holdfast's own part (key, codec, cipher, store) failed",
      attributes: [FAILOVER, CAUSE],
    },
    cleanupRows: {
      kind: 'counter',
      name: 'cleanup.rows',
      unit: '{row}',
      description: 'Expired entries removed by the cleanup',
    },
    cleanupBatches: {
      kind: 'counter',
      name: 'cleanup.batches',
      unit: '{statement}',
      description: 'Cleanup DELETE statements (each at most cleanup.batchSize rows)',
    },
    cleanupSkipped: {
      kind: 'counter',
      name: 'cleanup.skipped',
      unit: '{tick}',
      description: 'Scheduled cleanups left to the instance holding the lease',
    },
  });
  private readonly calls = this.instruments.calls;

  /** Cleanup progress: rows removed, DELETE statements run, ticks skipped (another instance cleaned). */
  cleanupRows = 0;
  cleanupBatches = 0;
  cleanupSkips = 0;

  /** Scatter slices not returned by the upstream (not stored). */
  missingSlices = 0;
  /** Values refused before storing (class unknown to the recovery allowlist). */
  refusedPayloads = 0;

  /** Calls answered by the upstream alone because Holdfast's own part failed (see FailoverBypass). */
  bypassedCalls = 0;

  /** Failed store operations (a failed batch counts each of its writes). */
  storeErrors = 0;
  droppedWrites = 0;
  coalescedWrites = 0;
  /** Rows sent to the store, and the statements (or store calls) that carried them. */
  rowsWritten = 0;
  writeCalls = 0;
  readonly outcomes: Record<CallOutcome, number> = noOutcomes();

  /** Per failover name: its call outcomes and the last upstream error it recovered from (or not). */
  readonly byFailover = new Map<string, FailoverTally>();

  call(failover: string, outcome: CallOutcome): void {
    this.outcomes[outcome]++;
    const tally = this.tally(failover);
    tally.outcomes[outcome]++;
    this.calls.add(1, tally.attributes(outcome));
  }

  /**
   * The upstream of `failover` failed with `error` (whatever recovery then did); `mono` is the
   * caller's `performance.now()` reading of the failure, when it took one.
   */
  upstreamFailed(failover: string, error: unknown, mono = performance.now()): void {
    this.tally(failover).upstreamFailed(error, mono);
  }

  private tally(failover: string): Tally {
    let tally = this.byFailover.get(failover) as Tally | undefined;
    if (!tally) this.byFailover.set(failover, (tally = new Tally(failover)));
    return tally;
  }

  /** Store operations a call skipped because the store was unreachable (breaker open). */
  storeSkips = 0;

  storeSkipped(operation: string): void {
    this.storeSkips++;
    this.instruments.storeSkipped.add(1, { [OPERATION]: operation });
  }

  cleanupBatch(rows: number): void {
    this.cleanupRows += rows;
    this.cleanupBatches++;
    this.instruments.cleanupRows.add(rows);
    this.instruments.cleanupBatches.add(1);
  }

  cleanupSkipped(): void {
    this.cleanupSkips++;
    this.instruments.cleanupSkipped.add(1);
  }

  slicesMissing(failover: string, count: number): void {
    this.missingSlices += count;
    this.instruments.slicesMissing.add(count, { [FAILOVER]: failover });
  }

  payloadRefused(failover: string, payloadClass: string): void {
    this.refusedPayloads++;
    this.instruments.payloadsRefused.add(1, { [FAILOVER]: failover, [PAYLOAD_CLASS]: payloadClass });
  }

  bypassed(failover: string, cause: string): void {
    this.bypassedCalls++;
    this.instruments.bypassed.add(1, { [FAILOVER]: failover, [CAUSE]: cause });
  }

  storeError(operation: string, count = 1): void {
    this.storeErrors += count;
    this.instruments.storeErrors.add(count, { [OPERATION]: operation });
  }

  coalesced(): void {
    this.coalescedWrites++;
  }

  written(rows: number, calls: number): void {
    this.rowsWritten += rows;
    this.writeCalls += calls;
    this.instruments.writesRows.add(rows);
  }

  dropped(): void {
    this.droppedWrites++;
    this.instruments.writesDropped.add(1);
  }
}
