import { Inject, Injectable, Logger, OnModuleInit, Optional } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import { discoverMethods } from '@holdfast/core/kit';
import type { FailoverMetadata } from '../decorators/failover-options';
import {
  DuplicateFailoverStoreError,
  FailoverConfigurationError,
  UnknownFailoverStoreError,
} from '../errors';
import { DEFAULT_FAILOVER_STORE, FAILOVER_METADATA } from '../failover.constants';
import { FAILOVER_RESOLVED_OPTIONS, FAILOVER_STORE_NAME } from '../failover.tokens';
import { failoverExecutorProperty, getFailoverStoreToken } from '../failover.tokens';
import type { ResolvedFailoverOptions, SqlStoreOptions } from '../failover.options';
import { FailoverTypeRegistry } from '../payload/failover-type.registry';
import type { FailoverStore } from '../store/failover-store';
import { FailoverExecutor } from '../executor/failover-executor';
import { FailoverRegistry, type DiscoveredFailover } from './failover.registry';

type DiscoveredMethodWrapper = ReturnType<typeof discoverMethods>[number]['wrapper'];

/**
 * Finds every @Failover method at bootstrap: rejects duplicate names and stores no module
 * registers, registers payload types (the recovery allowlist) and logs one summary line per
 * failover. With several FailoverModules (`forRoot({ name })`), each one's explorer checks every
 * failover and takes those addressed to it (`@Failover({ store })`, default 'default').
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
    @Inject(FAILOVER_RESOLVED_OPTIONS) private readonly options: ResolvedFailoverOptions,
    @Inject(getFailoverStoreToken()) private readonly store: FailoverStore,
    private readonly executor: FailoverExecutor,
    @Optional() @Inject(FAILOVER_STORE_NAME) private readonly storeName: string = DEFAULT_FAILOVER_STORE,
  ) {}

  async onModuleInit(): Promise<void> {
    const sql = this.options.store.type === 'sql' ? (this.options.store as SqlStoreOptions) : undefined;
    this.types.configure(sql?.allowedPayloadClasses, sql?.strictAllowlist);
    for (const type of this.options.types) this.types.register(type, 'FailoverModule types');
    const found: Array<{ metadata: FailoverMetadata; host?: ModuleRef }> = [];
    const stores = this.storeNames();
    // Names are unique across every store of the app (metrics and logs go by name).
    const all = new Map<string, DiscoveredFailover>();
    for (const { metadata, declaredOn, wrapper } of discoverMethods<FailoverMetadata>(
      this.discovery,
      this.scanner,
      FAILOVER_METADATA,
    )) {
      const existing = all.get(metadata.name);
      if (existing && existing.metadata !== metadata) {
        throw new FailoverConfigurationError(
          `Duplicate failover name '${metadata.name}': declared on ${existing.declaredOn} and on ${declaredOn}. ` +
            `Names must be unique; use 'domain' to share stored entries between failovers.`,
        );
      }
      all.set(metadata.name, { metadata, declaredOn });
      const store = metadata.store ?? DEFAULT_FAILOVER_STORE;
      if (!stores.includes(store))
        throw new UnknownFailoverStoreError(metadata.name, store, declaredOn, stores);
      if (store !== this.storeName) continue;
      this.checkInjected(metadata, declaredOn, wrapper, stores);
      this.register(metadata, declaredOn);
      const host = wrapper.host?.getProviderByKey<ModuleRef>(ModuleRef)?.instance;
      found.push({ metadata, host: host ?? undefined });
    }
    // Key generators and splitters are built in the module that declares the failover.
    for (const { metadata, host } of found) await this.executor.prepare(metadata, host);
    this.summarize();
  }

  /** The names of every FailoverModule of the app; two of one name stop the bootstrap. */
  private storeNames(): string[] {
    const names: string[] = [];
    for (const wrapper of this.discovery.getProviders()) {
      if (wrapper.token !== FAILOVER_STORE_NAME || typeof wrapper.instance !== 'string') continue;
      if (names.includes(wrapper.instance)) throw new DuplicateFailoverStoreError(wrapper.instance);
      names.push(wrapper.instance);
    }
    // A module built outside the discovery (none today) still knows its own name.
    if (!names.includes(this.storeName)) names.push(this.storeName);
    return names;
  }

  /**
   * A named store exists but the provider's module cannot see it (`isGlobal: false` and not
   * imported there): its optional property injection left the executor out. Checked on class
   * providers Nest built (a factory's or a value's instance gets no property injection).
   */
  private checkInjected(
    metadata: FailoverMetadata,
    declaredOn: string,
    wrapper: DiscoveredMethodWrapper,
    stores: string[],
  ): void {
    if (metadata.store === undefined || metadata.store === DEFAULT_FAILOVER_STORE) return;
    const instance: unknown = wrapper.instance;
    if (!wrapper.metatype || wrapper.inject || !wrapper.isDependencyTreeStatic()) return;
    if (instance === null || typeof instance !== 'object') return;
    if ((instance as Record<symbol, unknown>)[failoverExecutorProperty(metadata.store)] !== undefined) return;
    throw new UnknownFailoverStoreError(
      metadata.name,
      metadata.store,
      declaredOn,
      stores,
      `that FailoverModule is not visible from the module of ${declaredOn} (it has isGlobal: false and is not imported there)`,
    );
  }

  /** One line per failover, and warnings for set-ups that usually are mistakes. */
  private summarize(): void {
    const store = this.store.description ?? this.options.store.type;
    const found = this.registry.list();
    for (const { metadata, declaredOn } of found) {
      this.logger.log(
        `Failover '${metadata.name}'${this.storeName === DEFAULT_FAILOVER_STORE ? '' : ` (store '${this.storeName}')`} on ${declaredOn}: domain=${metadata.domain ?? '-'} expiry=${metadata.expiryMs}ms ` +
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
    if (metadata.type)
      this.types.register(metadata.type, `the type of @Failover('${metadata.name}') on ${declaredOn}`);
    this.registry.add({ metadata, declaredOn });
  }
}
