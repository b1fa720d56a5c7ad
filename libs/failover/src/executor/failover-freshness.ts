import { Injectable } from '@nestjs/common';
import { settle, type FailoverCall } from './failover-call';
import { FailoverFlights } from './failover-flights';
import { FailoverLookup } from './failover-lookup';
import { FailoverParts } from './failover-parts';
import { storeClock } from './guarded-store';

/** How a call reaches the upstream: `proceed` as a caller would, `refresh` as a background refresh. */
export interface FreshnessRoutes {
  readonly proceed: <T>(call: FailoverCall) => Promise<T | null>;
  readonly refresh: <T>(call: FailoverCall) => Promise<T | null>;
}

/**
 * The fresh window of a failover (`fresh`): a stored value younger than the window answers the
 * call without the upstream; past `refreshAfter`, it answers too and one background call (per
 * key, in this process) refreshes it. Anything else (nothing stored, too old, the store skipped
 * or failing) goes to the upstream as without the window.
 */
@Injectable()
export class FailoverFreshness {
  constructor(
    private readonly parts: FailoverParts,
    private readonly lookups: FailoverLookup,
    private readonly flights: FailoverFlights,
  ) {}

  serve<T>(call: FailoverCall, routes: FreshnessRoutes): Promise<T | null> {
    const { meta, runtime, store } = call;
    const { guard, runtimes, metrics } = this.parts;
    // The store is being skipped (unreachable moments ago): the call goes on without waiting for it.
    if (!guard.closed) return routes.proceed<T>(call);
    const key = runtimes.key(runtime, call.rawKey);
    return this.lookups.lookup<T>(call, key).then((entry) => {
      if (!entry) return routes.proceed<T>(call);
      const age = storeClock(store) - entry.asOf.getTime();
      if (age >= meta.freshMs) return routes.proceed<T>(call);
      if (meta.refreshAfterMs !== undefined && age >= meta.refreshAfterMs) this.refresh(call, routes);
      settle(metrics, call, 'fresh');
      return entry.payload;
    });
  }

  /**
   * One background call of the upstream for the key: it joins the flight running for the key
   * (a single-flight call or another refresh) rather than start a second. What it answers is
   * stored as any call's value; its failure is counted and logged as any call's, never thrown.
   */
  private refresh(call: FailoverCall, routes: FreshnessRoutes): void {
    const { answer } = this.flights.join({ ...call, trace: undefined }, (flightCall) =>
      routes.refresh(flightCall),
    );
    answer.then(undefined, () => undefined);
  }
}
