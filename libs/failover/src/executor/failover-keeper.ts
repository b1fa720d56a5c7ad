import { UnknownPayloadClassError } from '../errors';
import { NOT_NOW, type FailoverEntry } from '../store/failover-store';
import { Injectable, Logger } from '@nestjs/common';
import type { FailoverCall } from './failover-call';
import { FailoverParts } from './failover-parts';
import type { Runtime } from './failover-runtimes';
import { storeClock } from './guarded-store';
import { scatter } from './scatter';

const logger = new Logger('FailoverExecutor');

/**
 * Keeps a good value: the entry (or one per slice with a splitter) handed to the writer, after
 * checking it can be rebuilt on recovery.
 */
@Injectable()
export class FailoverKeeper {
  /** `failover\0class` pairs already reported as unknown payload classes (reported once). */
  private readonly refused = new Set<string>();

  constructor(private readonly parts: FailoverParts) {}

  /**
   * Stores the call's value, or each of its slices; never throws. A promise only when the
   * caller must wait; a boolean when the write was done at once (`now`: the caller allows it),
   * false when it failed (logged, counted).
   */
  keep(call: FailoverCall, value: unknown, now: boolean): Promise<boolean | void> | boolean | undefined {
    const { meta, runtime, store } = call;
    if (!runtime.splitter) {
      if (!this.recoverable(runtime, value)) return undefined;
      const entry = this.entry(call, call.rawKey, value);
      const writer = this.parts.writer;
      if (now) {
        const done = writer.storeNow(store, meta.name, entry, runtime.entryType);
        if (done !== NOT_NOW) return done;
      }
      return writer.store(store, meta.name, entry, runtime.entryType);
    }
    return this.keepSlices(call, value);
  }

  /** The entry of `payload` under `rawKey`, stamped with the store's clock. */
  private entry<T>(call: FailoverCall, rawKey: string, payload: T): FailoverEntry<T> {
    const { meta, runtime, store } = call;
    const asOf = new Date(storeClock(store));
    return {
      name: meta.effectiveName,
      key: this.parts.runtimes.key(runtime, rawKey),
      asOf,
      expireOn: new Date(asOf.getTime() + meta.expiryMs),
      payload,
    };
  }

  private async keepSlices(call: FailoverCall, value: unknown): Promise<void> {
    const { meta, runtime, store } = call;
    const { runtimes, writer, metrics, options } = this.parts;
    let slices;
    try {
      slices = runtime.splitter!.splitOnStore(call.upstream.args, value);
    } catch (error) {
      runtimes.splitterFailed(runtime, 'splitOnStore', error);
      return;
    }
    // Partial results: an item the upstream did not return is simply not stored (and counted).
    const writes: Array<() => Promise<boolean> | undefined> = [];
    let missing = 0;
    for (const slice of slices ?? []) {
      if (slice === null || slice === undefined || slice.payload === null || slice.payload === undefined) {
        missing++;
        continue;
      }
      if (!this.recoverable(runtime, slice.payload)) continue;
      let sliceKey: string;
      try {
        sliceKey = runtimes.rawKey(runtime, slice.args);
      } catch (error) {
        runtimes.splitterFailed(runtime, 'splitOnStore', error);
        continue;
      }
      writes.push(() =>
        writer.store(store, meta.name, this.entry(call, sliceKey, slice.payload), runtime.entryType),
      );
    }
    if (missing) metrics.slicesMissing(meta.name, missing);
    await scatter(options.scatter, writes, (i) =>
      logger.warn(`Failover '${meta.name}': storing slice ${i} timed out`),
    );
  }

  /**
   * Whether the value can be rebuilt on recovery; a class instance of an unknown class is
   * refused before it is stored: an error log once per failover and class, a metric each time.
   */
  private recoverable(runtime: Runtime, value: unknown): boolean {
    const { meta } = runtime;
    try {
      this.parts.codec.payloadClass(value, runtime.entryType, meta.name);
      return true;
    } catch (error) {
      if (!(error instanceof UnknownPayloadClassError)) throw error;
      this.parts.metrics.payloadRefused(meta.name, error.payloadClass);
      const id = `${meta.name}\u0000${error.payloadClass}`;
      if (!this.refused.has(id)) {
        this.refused.add(id);
        logger.error(error.message);
      }
      return false;
    }
  }
}
