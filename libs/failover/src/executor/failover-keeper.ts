import type { Logger } from '@nestjs/common';
import type { FailoverMetadata } from '../decorator/failover-options';
import { UnknownPayloadClassError } from '../errors';
import type { FailoverMetrics } from '../health/failover.metrics';
import type { ResolvedFailoverModuleOptions } from '../options/failover-module.options';
import type { PayloadCodec } from '../payload/payload-codec';
import { NOT_NOW, type FailoverEntry, type FailoverStore } from '../store/failover-store';
import type { FailoverWriter } from './failover-writer';
import type { FailoverRuntimes, Runtime } from './failover-runtimes';
import { storeClock } from './guarded-store';
import { scatter } from './scatter';

/**
 * Keeps a good value: the entry (or one per slice with a splitter) handed to the writer, after
 * checking it can be rebuilt on recovery.
 */
export class FailoverKeeper {
  /** `failover\0class` pairs already reported as unknown payload classes (reported once). */
  private readonly refused = new Set<string>();

  constructor(
    private readonly options: ResolvedFailoverModuleOptions,
    private readonly writer: FailoverWriter,
    private readonly codec: PayloadCodec,
    private readonly metrics: FailoverMetrics,
    private readonly runtimes: FailoverRuntimes,
    private readonly logger: Logger,
  ) {}

  /**
   * Stores the value, or each of its slices; never throws. A promise only when the caller must
   * wait; a boolean when the write was done at once (`now`: the caller allows it), false when it
   * failed (logged, counted).
   */
  keep(
    meta: FailoverMetadata,
    runtime: Runtime,
    store: FailoverStore,
    args: unknown[],
    rawKey: string,
    value: unknown,
    now: boolean,
  ): Promise<boolean | void> | boolean | undefined {
    if (!runtime.splitter) {
      if (!this.recoverable(meta, runtime, value)) return undefined;
      const entry = this.entry(meta, runtime, store, rawKey, value);
      if (now) {
        const done = this.writer.storeNow(store, meta.name, entry, runtime.entryType);
        if (done !== NOT_NOW) return done;
      }
      return this.writer.store(store, meta.name, entry, runtime.entryType);
    }
    return this.keepSlices(meta, runtime, store, args, value);
  }

  private entry<T>(
    meta: FailoverMetadata,
    runtime: Runtime,
    store: FailoverStore,
    rawKey: string,
    payload: T,
  ): FailoverEntry<T> {
    const asOf = new Date(storeClock(store));
    return {
      name: meta.effectiveName,
      key: this.runtimes.key(meta, runtime, rawKey),
      asOf,
      expireOn: new Date(asOf.getTime() + meta.expiryMs),
      payload,
    };
  }

  private async keepSlices(
    meta: FailoverMetadata,
    runtime: Runtime,
    store: FailoverStore,
    args: unknown[],
    value: unknown,
  ): Promise<void> {
    let slices;
    try {
      slices = runtime.splitter!.splitOnStore(args, value);
    } catch (error) {
      this.runtimes.splitterFailed(meta, runtime, 'splitOnStore', error);
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
      if (!this.recoverable(meta, runtime, slice.payload)) continue;
      let sliceKey: string;
      try {
        sliceKey = this.runtimes.rawKey(runtime, slice.args);
      } catch (error) {
        this.runtimes.splitterFailed(meta, runtime, 'splitOnStore', error);
        continue;
      }
      writes.push(() =>
        this.writer.store(
          store,
          meta.name,
          this.entry(meta, runtime, store, sliceKey, slice.payload),
          runtime.entryType,
        ),
      );
    }
    if (missing) this.metrics.slicesMissing(meta.name, missing);
    await scatter(this.options.scatter, writes, (i) =>
      this.logger.warn(`Failover '${meta.name}': storing slice ${i} timed out`),
    );
  }

  /**
   * Whether the value can be rebuilt on recovery; a class instance of an unknown class is
   * refused before it is stored: an error log once per failover and class, a metric each time.
   */
  private recoverable(meta: FailoverMetadata, runtime: Runtime, value: unknown): boolean {
    try {
      this.codec.payloadClass(value, runtime.entryType, meta.name);
      return true;
    } catch (error) {
      if (!(error instanceof UnknownPayloadClassError)) throw error;
      this.metrics.payloadRefused(meta.name, error.payloadClass);
      const id = `${meta.name}\u0000${error.payloadClass}`;
      if (!this.refused.has(id)) {
        this.refused.add(id);
        this.logger.error(error.message);
      }
      return false;
    }
  }
}
