import type { FailoverMetadata } from '../decorators/failover-options';
import type { CallOutcome, FailoverMetrics } from '../metrics/failover.metrics';
import type { FailoverStore } from '../store/failover-store';
import type { Runtime } from './failover-runtimes';

/** The decorated method, as the decorator hands a call over. */
// Any method's parameters: `unknown[]` would refuse every method that declares its own.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Upstream = (...args: any[]) => unknown;

/** The decorated method's own call: what the undecorated method would have run. */
export interface UpstreamCall {
  /** `this` of the call. */
  readonly instance: unknown;
  readonly method: Upstream;
  readonly args: unknown[];
}

/** Runs the undecorated method (its value or its synchronous throw). */
export function callUpstream(upstream: UpstreamCall): unknown {
  return upstream.method.apply(upstream.instance, upstream.args);
}

/** A call of a @Failover method as it arrives, before its store and key are known. */
export interface FailoverInvocation {
  readonly meta: FailoverMetadata;
  readonly upstream: UpstreamCall;
  /** What the call's span learns as it runs (only when a span records it). */
  readonly trace?: CallTrace;
}

/** A call's outcome as its span reports it, and whether it shared another call's attempt. */
export interface CallTrace {
  outcome?: CallOutcome;
  shared?: boolean;
}

/** Counts the call's outcome, and tells its span. */
export function settle(metrics: FailoverMetrics, invocation: FailoverInvocation, outcome: CallOutcome): void {
  metrics.call(invocation.meta.name, outcome);
  if (invocation.trace) invocation.trace.outcome = outcome;
}

/**
 * One call with everything its keeping and recovery need, built once per call: the failover's
 * runtime (its per-method context, built once), the store of the call (a tenant's) and its raw key.
 */
export interface FailoverCall extends FailoverInvocation {
  readonly runtime: Runtime;
  readonly store: FailoverStore;
  readonly rawKey: string;
}
