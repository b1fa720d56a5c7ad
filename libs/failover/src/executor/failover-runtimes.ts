import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { ConsecutiveBreaker, circuitBreaker, handleWhen, type CircuitBreakerPolicy } from 'cockatiel';
import { parseDuration } from '@holdfast/core/kit';
import type { FailoverMetadata } from '../decorators/failover-options';
import { PayloadSplitterError } from '../errors';
import { FailoverMetrics } from '../metrics/failover.metrics';
import { FailoverOverrides } from '../explorer/failover-overrides';
import {
  FAILOVER_KEY_GENERATOR,
  FAILOVER_RESOLVED_OPTIONS,
  FAILOVER_STORE_NAME,
  getFailoverKeyGeneratorToken,
} from '../failover.tokens';
import type { KeyGenerator } from '../key/key-generator';
import { moduleKeyGenerator } from '../key/module-key-generator';
import type { ResolvedFailoverOptions } from '../failover.options';
import type { Class, PayloadType } from '../payload/payload-type';
import type { PayloadSplitter } from '../scatter/payload-splitter';
import { RuntimeKeys } from './runtime-keys';

/**
 * A failover's per-method context, built once (at bootstrap, or on first use) and not changed
 * after: its declaration and pieces.
 */
export interface Runtime {
  /** The failover's declaration. */
  readonly meta: FailoverMetadata;
  /** Its key generator, and the stored keys of raw keys. */
  readonly keys: RuntimeKeys;
  readonly splitter?: PayloadSplitter;
  readonly breaker?: CircuitBreakerPolicy;
  /** The type of one stored entry: the element type when a splitter stores slices. */
  readonly entryType?: PayloadType;
}

/**
 * What each failover needs per call, built once: its key generator, splitter, circuit breaker
 * and entry type; the keys (raw and stored) of a call; the guarded `recoverOn` predicate and
 * the report of a failing splitter.
 */
@Injectable()
export class FailoverRuntimes {
  private readonly runtimes = new WeakMap<FailoverMetadata, Runtime>();
  private readonly logger = new Logger('FailoverExecutor');
  /** The key generator of failovers without their own, derived once (on first use). */
  private moduleKeys?: KeyGenerator;

  constructor(
    @Inject(FAILOVER_RESOLVED_OPTIONS) private readonly options: ResolvedFailoverOptions,
    private readonly metrics: FailoverMetrics,
    @Optional() private readonly moduleRef?: ModuleRef,
    @Optional() @Inject(FAILOVER_KEY_GENERATOR) private readonly providedKeys?: KeyGenerator,
    @Optional() private readonly overrides?: FailoverOverrides,
    @Optional() @Inject(FAILOVER_STORE_NAME) private readonly storeName?: string,
  ) {}

  /**
   * The app's own FAILOVER_KEY_GENERATOR provider (found after bootstrap, so read on first use),
   * else the module's (`keys`), once.
   */
  private defaultKeys(): KeyGenerator {
    return (this.moduleKeys ??=
      this.overrides?.find<KeyGenerator>(
        FAILOVER_KEY_GENERATOR,
        getFailoverKeyGeneratorToken(this.storeName),
      ) ??
      this.providedKeys ??
      moduleKeyGenerator(this.options.keys));
  }

  /**
   * Builds a failover's key generator and splitter once, at bootstrap: a class is the app's
   * provider when it registers one, else it is created in the declaring module (`moduleRef`)
   * with its own injected dependencies; an instance is used as it is.
   */
  async prepare(meta: FailoverMetadata, moduleRef?: ModuleRef): Promise<void> {
    const ref = moduleRef ?? this.moduleRef;
    const resolve = async <T>(what: Class<T> | T | string | undefined): Promise<T | undefined> => {
      if (what === undefined) return undefined;
      if (typeof what === 'string') return this.moduleRef!.get<T>(what, { strict: false });
      if (typeof what !== 'function') return what;
      const cls = what as Class<T>;
      if (!ref) return new cls();
      try {
        return ref.get<T>(cls, { strict: false });
      } catch {
        return ref.create<T>(cls as never);
      }
    };
    const keyGenerator = await resolve<KeyGenerator>(meta.keyGenerator);
    const splitter = await resolve<PayloadSplitter>(meta.payloadSplitter);
    this.runtimes.set(meta, this.build(meta, keyGenerator, splitter));
  }

  get(meta: FailoverMetadata): Runtime {
    let runtime = this.runtimes.get(meta);
    if (runtime) return runtime;
    // Not discovered at bootstrap (a provider Nest did not list): built here, without DI.
    const keyGenerator =
      meta.keyGenerator === undefined
        ? undefined
        : typeof meta.keyGenerator === 'string'
          ? this.moduleRef!.get<KeyGenerator>(meta.keyGenerator, { strict: false })
          : typeof meta.keyGenerator === 'function'
            ? new meta.keyGenerator()
            : meta.keyGenerator;
    const splitter =
      typeof meta.payloadSplitter === 'function' ? new meta.payloadSplitter() : meta.payloadSplitter;
    runtime = this.build(meta, keyGenerator, splitter);
    this.runtimes.set(meta, runtime);
    return runtime;
  }

  private build(
    meta: FailoverMetadata,
    keyGenerator: KeyGenerator | undefined,
    splitter: PayloadSplitter | undefined,
  ): Runtime {
    const execution = meta.execution ?? this.options.execution;
    const breakerOptions = execution?.circuitBreaker;
    const breaker = breakerOptions
      ? circuitBreaker(
          handleWhen((error) => !meta.recoverOn || this.recoverOn(meta, error)),
          {
            halfOpenAfter: parseDuration(breakerOptions.halfOpenAfter ?? '10s', 'halfOpenAfter'),
            breaker: new ConsecutiveBreaker(breakerOptions.consecutiveFailures ?? 5),
          },
        )
      : undefined;
    // With a splitter each slice is stored on its own: an element of the declared array.
    const declared = splitter && Array.isArray(meta.type) ? meta.type[0] : meta.type;
    const entryType: PayloadType | undefined = meta.javaClass
      ? { javaClass: meta.javaClass, type: declared }
      : declared;
    return {
      meta,
      keys: new RuntimeKeys(keyGenerator ?? this.defaultKeys(), meta),
      splitter,
      breaker,
      entryType,
    };
  }

  /** Layer 1 for this failover; a key error names the failover. */
  rawKey(runtime: Runtime, args: readonly unknown[]): string {
    return runtime.keys.raw(args);
  }

  /** The stored key of a raw key. */
  key(runtime: Runtime, rawKey: string): string {
    return runtime.keys.storedKey(rawKey);
  }

  /** The failover's `recoverOn` predicate; one that throws means "not recoverable". */
  recoverOn(meta: FailoverMetadata, error: unknown): boolean {
    try {
      return meta.recoverOn!(error) === true;
    } catch (predicateError) {
      this.logger.warn(
        `Failover '${meta.name}': recoverOn threw (${(predicateError as Error)?.message}); not recovering`,
      );
      return false;
    }
  }

  splitterFailed(runtime: Runtime, operation: PayloadSplitterError['operation'], cause: unknown): void {
    const splitterName = runtime.splitter?.constructor?.name ?? 'PayloadSplitter';
    const error = new PayloadSplitterError(splitterName, operation, runtime.meta.name, cause);
    this.metrics.storeError(operation);
    this.logger.error(error.message);
  }
}
