import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import { discoverMethods } from '@holdfast/core';
import type { FailoverMetadata } from '../decorator/failover-options';
import { FailoverConfigurationError } from '../errors';
import { FAILOVER_METADATA, FAILOVER_RESOLVED_OPTIONS, getFailoverStoreToken } from '../failover.constants';
import type { ResolvedFailoverModuleOptions, SqlStoreOptions } from '../options/failover-module.options';
import { FailoverTypeRegistry } from '../payload/failover-type.registry';
import type { FailoverStore } from '../store/failover-store';
import { FailoverExecutor } from './failover-executor';
import { FailoverRegistry } from './failover.registry';

/**
 * Finds every @Failover method at bootstrap: rejects duplicate names, registers payload types
 * (the recovery allowlist) and logs one summary line per failover.
 */
function splitterName(splitter: FailoverMetadata['payloadSplitter']): string {
  if (!splitter) return '-';
  return typeof splitter === 'function' ? splitter.name : (splitter.constructor?.name ?? 'instance');
}

@Injectable()
export class FailoverExplorer implements OnModuleInit {
  private readonly logger = new Logger(FailoverExplorer.name);

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly registry: FailoverRegistry,
    private readonly types: FailoverTypeRegistry,
    @Inject(FAILOVER_RESOLVED_OPTIONS) private readonly options: ResolvedFailoverModuleOptions,
    @Inject(getFailoverStoreToken()) private readonly store: FailoverStore,
    private readonly executor: FailoverExecutor,
  ) {}

  async onModuleInit(): Promise<void> {
    const sql = this.options.store.type === 'sql' ? (this.options.store as SqlStoreOptions) : undefined;
    this.types.configure(sql?.allowedPayloadClasses, sql?.strictAllowlist);
    for (const type of this.options.types) this.types.register(type, 'FailoverModule types');
    const found: Array<{ metadata: FailoverMetadata; host?: ModuleRef }> = [];
    for (const { metadata, declaredOn, wrapper } of discoverMethods<FailoverMetadata>(
      this.discovery,
      this.scanner,
      FAILOVER_METADATA,
    )) {
      this.register(metadata, declaredOn);
      const host = wrapper.host?.getProviderByKey<ModuleRef>(ModuleRef)?.instance;
      found.push({ metadata, host: host ?? undefined });
    }
    // Key generators and splitters are built in the module that declares the failover.
    for (const { metadata, host } of found) await this.executor.prepare(metadata, host);
    this.summarize();
  }

  /** One line per failover, and warnings for set-ups that usually are mistakes. */
  private summarize(): void {
    const store = this.store.description ?? this.options.store.type;
    const found = this.registry.list();
    for (const { metadata, declaredOn } of found) {
      this.logger.log(
        `Failover '${metadata.name}' on ${declaredOn}: domain=${metadata.domain ?? '-'} expiry=${metadata.expiryMs}ms ` +
          `store=${store}${this.options.multiTenant ? ' (per tenant)' : ''} async=${this.options.async ? 'write-behind' : 'off'} ` +
          `splitter=${splitterName(metadata.payloadSplitter)}${metadata.recoverAll ? ' recoverAll' : ''}`,
      );
      if (metadata.recoverAll && !metadata.payloadSplitter) {
        this.logger.warn(`Failover '${metadata.name}': recoverAll has no effect without a payloadSplitter`);
      }
    }
    if (found.length && this.options.store.type === 'memory' && process.env.NODE_ENV === 'production') {
      this.logger.warn(
        "Failover store is in memory (not durable): stored values are lost on restart. Use store: { type: 'sql' } in production.",
      );
    }
    const byDomain = new Map<string, Set<number>>();
    for (const { metadata } of found)
      byDomain.set(
        metadata.effectiveName,
        (byDomain.get(metadata.effectiveName) ?? new Set()).add(metadata.expiryMs),
      );
    for (const [domain, expiries] of byDomain) {
      if (expiries.size > 1) {
        this.logger.warn(
          `Failovers of domain '${domain}' have different expiries (${[...expiries].join(', ')} ms): the entry a call recovers depends on which one wrote it last`,
        );
      }
    }
  }

  private register(metadata: FailoverMetadata, declaredOn: string): void {
    const existing = this.registry.get(metadata.name);
    if (existing && existing.metadata !== metadata) {
      throw new FailoverConfigurationError(
        `Duplicate failover name '${metadata.name}': declared on ${existing.declaredOn} and on ${declaredOn}. ` +
          `Names must be unique; use 'domain' to share stored entries between failovers.`,
      );
    }
    if (metadata.type)
      this.types.register(metadata.type, `the type of @Failover('${metadata.name}') on ${declaredOn}`);
    this.registry.add({ metadata, declaredOn });
  }
}
