import { Inject, Injectable, OnModuleInit, Optional } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import { discoverMethods } from '@holdfast/core/kit';
import type { FailoverMetadata } from '../decorators/failover-options';
import {
  DuplicateFailoverStoreError,
  FailoverConfigurationError,
  UnknownFailoverStoreError,
} from '../errors';
import { DEFAULT_FAILOVER_STORE, FAILOVER_METADATA } from '../failover.constants';
import { FAILOVER_STORE_NAME, failoverExecutorProperty } from '../failover.tokens';
import { FailoverExecutor } from '../executor/failover-executor';
import { FailoverDeclarations, FailoverSummary } from './failover-summary';
import type { DiscoveredFailover } from './failover.registry';

type DiscoveredMethodWrapper = ReturnType<typeof discoverMethods>[number]['wrapper'];

/**
 * Finds every @Failover method at bootstrap: rejects duplicate names and stores no module
 * registers, registers payload types (the recovery allowlist) and logs one summary line per
 * failover. With several FailoverModules (`forRoot({ name })`), each one's explorer checks every
 * failover and takes those addressed to it (`@Failover({ store })`, default 'default').
 */
@Injectable()
export class FailoverExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly declarations: FailoverDeclarations,
    private readonly executor: FailoverExecutor,
    private readonly summary: FailoverSummary,
    @Optional() @Inject(FAILOVER_STORE_NAME) private readonly storeName: string = DEFAULT_FAILOVER_STORE,
  ) {}

  async onModuleInit(): Promise<void> {
    this.declarations.configureTypes();
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
      this.declarations.register(metadata, declaredOn);
      const host = wrapper.host?.getProviderByKey<ModuleRef>(ModuleRef)?.instance;
      found.push({ metadata, host: host ?? undefined });
    }
    // Key generators and splitters are built in the module that declares the failover.
    for (const { metadata, host } of found) await this.executor.prepare(metadata, host);
    this.summary.log();
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
}
