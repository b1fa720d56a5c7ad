import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { FAILOVER_RESOLVED_OPTIONS, getFailoverStoreToken } from '../failover.constants';
import type { FailoverMetadata } from '../decorator/failover-options';
import { FailoverMetrics } from '../health/failover.metrics';
import { failoverKey } from '../key/failover-key';
import { DefaultKeyGenerator, type KeyGenerator } from '../key/key-generator';
import { markRecovered } from '../payload/referential';
import type { ResolvedFailoverModuleOptions } from '../options/failover-module.options';
import type { FailoverStore } from '../store/failover-store';
import { FailoverWriter } from './failover-writer';
import { RecoveredPayloadHandler } from './recovered-payload.handler';

const defaultKeyGenerator = new DefaultKeyGenerator();

/**
 * Runs a @Failover method: calls the upstream, keeps each good value, and answers from the
 * store when the upstream fails. Reached from the decorated method by property injection.
 */
@Injectable()
export class FailoverExecutor {
  private readonly logger = new Logger(FailoverExecutor.name);
  private readonly keyGenerators = new WeakMap<FailoverMetadata, KeyGenerator>();
  private handler?: RecoveredPayloadHandler;

  constructor(
    @Inject(FAILOVER_RESOLVED_OPTIONS) private readonly options: ResolvedFailoverModuleOptions,
    @Inject(getFailoverStoreToken()) private readonly store: FailoverStore,
    private readonly writer: FailoverWriter,
    private readonly metrics: FailoverMetrics,
    @Optional() private readonly moduleRef?: ModuleRef,
  ) {}

  async execute<T>(
    meta: FailoverMetadata,
    instance: unknown,
    upstream: (...args: any[]) => unknown,
    args: unknown[],
  ): Promise<T | null> {
    let value: T;
    try {
      value = (await upstream.apply(instance, args)) as T;
    } catch (error) {
      return this.recover<T>(meta, args, error);
    }
    if (value !== null && value !== undefined) {
      const key = this.key(meta, args);
      const asOf = new Date();
      const entry = {
        name: meta.effectiveName,
        key,
        asOf,
        expireOn: new Date(asOf.getTime() + meta.expiryMs),
        payload: value,
      };
      const write = this.writer.submit('store', meta.name, () => this.store.store(entry, meta.type));
      if (write) await write;
    }
    this.metrics.call(meta.name, 'success');
    return value;
  }

  /** Resolves when every async store/delete submitted so far has finished. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  private key(meta: FailoverMetadata, args: readonly unknown[]): string {
    return failoverKey(meta.effectiveName, this.keyGenerator(meta).key(args));
  }

  private keyGenerator(meta: FailoverMetadata): KeyGenerator {
    if (!meta.keyGenerator) return defaultKeyGenerator;
    let generator = this.keyGenerators.get(meta);
    if (!generator) {
      generator =
        typeof meta.keyGenerator === 'string'
          ? this.moduleRef!.get<KeyGenerator>(meta.keyGenerator, { strict: false })
          : new meta.keyGenerator();
      this.keyGenerators.set(meta, generator);
    }
    return generator;
  }

  private async recover<T>(meta: FailoverMetadata, args: unknown[], error: unknown): Promise<T | null> {
    if (meta.recoverOn && !this.safeRecoverOn(meta, error)) {
      this.metrics.call(meta.name, 'not-recoverable');
      throw error;
    }
    const rawKey = this.keyGenerator(meta).key(args);
    const key = failoverKey(meta.effectiveName, rawKey);
    let entry;
    try {
      entry = await this.store.find<T>(meta.effectiveName, key, meta.type);
    } catch (storeError) {
      this.metrics.storeError('find');
      this.logger.warn(
        `Failover '${meta.name}': recovery failed: ${(storeError as Error)?.message ?? storeError}`,
      );
    }
    if (entry && Date.now() > entry.expireOn.getTime()) {
      const name = meta.effectiveName;
      const write = this.writer.submit('delete', meta.name, () => this.store.delete(name, key));
      if (write) await write;
      entry = undefined;
    }
    if (entry) {
      this.metrics.call(meta.name, 'recovered');
      return markRecovered(entry.payload, entry.asOf, error);
    }
    const handled = await this.fromHandler(meta, { rawKey, key, args, error });
    if (handled !== undefined) {
      this.metrics.call(meta.name, 'handler');
      return handled as T;
    }
    this.metrics.call(meta.name, 'failed');
    if (this.options.exceptionPolicy === 'never-throw') return null;
    throw error;
  }

  private safeRecoverOn(meta: FailoverMetadata, error: unknown): boolean {
    try {
      return meta.recoverOn!(error) === true;
    } catch (predicateError) {
      this.logger.warn(
        `Failover '${meta.name}': recoverOn threw (${(predicateError as Error)?.message}); not recovering`,
      );
      return false;
    }
  }

  private async fromHandler(
    meta: FailoverMetadata,
    ctx: { rawKey: string; key: string; args: unknown[]; error: unknown },
  ): Promise<unknown> {
    const handlerClass = this.options.recoveredPayloadHandler;
    if (!handlerClass) return undefined;
    try {
      this.handler ??= this.moduleRef
        ? await this.moduleRef.create(handlerClass)
        : new (handlerClass as any)();
      return await this.handler!.recover({ name: meta.name, effectiveName: meta.effectiveName, ...ctx });
    } catch (handlerError) {
      this.logger.warn(
        `Failover '${meta.name}': RecoveredPayloadHandler threw: ${(handlerError as Error)?.message}`,
      );
      return undefined;
    }
  }
}
