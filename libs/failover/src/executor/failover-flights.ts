import { Injectable } from '@nestjs/common';
import { FailoverMetrics } from '../metrics/failover.metrics';
import type { FailoverStore } from '../store/failover-store';
import type { CallTrace, FailoverCall } from './failover-call';

/** One upstream attempt in flight for a key, and what its call learned for the spans. */
interface Flight {
  readonly answer: Promise<unknown>;
  readonly trace: CallTrace;
}

/**
 * Single-flight, in this process: calls of one failover with one key (in one store: a tenant's
 * keys are its own) that arrive while a call runs share that call's answer instead of calling
 * the upstream again. The flight ends when its answer settles; the next call starts a new one.
 * Other processes run their own flights (nothing is shared through the store).
 */
@Injectable()
export class FailoverFlights {
  private readonly flights = new WeakMap<FailoverStore, Map<string, Flight>>();

  constructor(private readonly metrics: FailoverMetrics) {}

  /** Flights running now, for one store (tests and the bench read it). */
  running(store: FailoverStore): number {
    return this.flights.get(store)?.size ?? 0;
  }

  /**
   * The answer of the flight running for the call's key, else of `start` (run with a trace of
   * its own, as the flight's call), with `shared` telling whether another call started it.
   */
  join<T>(
    call: FailoverCall,
    start: (flightCall: FailoverCall) => Promise<T>,
  ): { answer: Promise<T>; trace: CallTrace; shared: boolean } {
    let byKey = this.flights.get(call.store);
    if (!byKey) this.flights.set(call.store, (byKey = new Map()));
    const id = `${call.meta.name}\u0000${call.rawKey}`;
    const running = byKey.get(id);
    if (running) return { answer: running.answer as Promise<T>, trace: running.trace, shared: true };
    const trace: CallTrace = {};
    let answer: Promise<T>;
    try {
      answer = start({ ...call, trace });
    } catch (error) {
      answer = Promise.reject(error);
    }
    const flight: Flight = { answer, trace };
    byKey.set(id, flight);
    const done = () => {
      if (byKey.get(id) === flight) byKey.delete(id);
    };
    answer.then(done, done);
    return { answer, trace, shared: false };
  }

  /**
   * The call's answer through the flight of its key (`singleFlight`): the caller that starts the
   * flight settles its own outcome (counted once, by it) and its span learns the flight's; a
   * caller that joins is counted with the flight's outcome, its span marked shared.
   */
  share<T>(call: FailoverCall, start: (flightCall: FailoverCall) => Promise<T>): Promise<T> {
    const { answer, trace, shared } = this.join(call, start);
    if (!shared) {
      if (!call.trace) return answer;
      const told = () => {
        call.trace!.outcome = trace.outcome;
      };
      return answer.then(
        (value) => (told(), value),
        (error: unknown) => {
          told();
          throw error;
        },
      );
    }
    const joined = () => {
      const outcome = trace.outcome ?? 'failed';
      this.metrics.call(call.meta.name, outcome);
      if (call.trace) Object.assign(call.trace, { outcome, shared: true });
    };
    return answer.then(
      (value) => (joined(), value),
      (error: unknown) => {
        joined();
        throw error;
      },
    );
  }
}
