import { Inject, Injectable, Logger } from '@nestjs/common';
import { tableName } from '@holdfast/core/kit';
import { FailoverTenantError } from '../errors';
import { FAILOVER_RESOLVED_OPTIONS } from '../failover.tokens';
import { getFailoverStoreToken } from '../failover.tokens';
import type { ResolvedFailoverOptions, SqlStoreOptions } from '../failover.options';
import type { FailoverStore } from '../store/failover-store';
import { FAILOVER_STORE_TABLE } from '../store/failover-store.table';
import { MemoryFailoverStore } from '../store/memory-failover.store';
import { SqlFailoverStore } from '../store/sql-failover.store';
import { FailoverTenant } from './failover-tenant';

/**
 * Which store a call uses. Without `multiTenant` it is always the configured store. With it,
 * the caller's tenant (resolved on the caller's async context) picks
 * `<tenantPrefix><globalPrefix>FAILOVER_STORE`; each tenant store is built once, even when many
 * first calls arrive together; an unknown tenant uses the global table unless `strict`.
 */
@Injectable()
export class FailoverStores {
  private readonly logger = new Logger(FailoverStores.name);
  private readonly tenantStores = new Map<string, Promise<FailoverStore>>();
  /** How many tenant stores were built (each once). */
  built = 0;
  private readonly readTenant: () => string | undefined;

  constructor(
    @Inject(FAILOVER_RESOLVED_OPTIONS) private readonly options: ResolvedFailoverOptions,
    @Inject(getFailoverStoreToken()) private readonly global: FailoverStore,
  ) {
    if (options.multiTenant && options.store.type === 'custom') {
      throw new FailoverTenantError(
        "multiTenant needs store type 'sql' or 'memory': a custom store cannot be split per tenant",
      );
    }
    this.readTenant = this.tenantReader();
  }

  /** resolveTenant, or FailoverTenant's context and then (with clsKey) the nestjs-cls store. */
  private tenantReader(): () => string | undefined {
    const multi = this.options.multiTenant;
    if (!multi) return () => undefined;
    if (multi.resolveTenant) return multi.resolveTenant;
    if (!multi.clsKey) return FailoverTenant.current;
    const key = multi.clsKey;
    let cls: { isActive(): boolean; get(key: string): unknown };
    try {
      // Optional: only apps that use nestjs-cls set clsKey.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { ClsServiceManager } = require('nestjs-cls');
      cls = ClsServiceManager.getClsService();
    } catch (cause) {
      throw new FailoverTenantError(
        `multiTenant.clsKey is set but nestjs-cls cannot be loaded (${(cause as Error).message}); ` +
          'install nestjs-cls or use resolveTenant',
      );
    }
    return () => {
      const tenant = FailoverTenant.current();
      if (tenant !== undefined) return tenant;
      const value = cls.isActive() ? cls.get(key) : undefined;
      return typeof value === 'string' ? value : undefined;
    };
  }

  /** The store for the current call (may be a promise the first time a tenant is seen). */
  forCall(): FailoverStore | Promise<FailoverStore> {
    const multi = this.options.multiTenant;
    if (!multi) return this.global;
    const tenant = this.readTenant() ?? multi.defaultTenant;
    if (tenant === undefined || tenant === '') {
      throw new FailoverTenantError(
        'No tenant for this call: resolveTenant() returned nothing and no multiTenant.defaultTenant is set ' +
          '(run the call inside FailoverTenant.run(tenant, ...) or your CLS context).',
      );
    }
    if (!multi.tenants[tenant]) {
      if (multi.strict) {
        throw new FailoverTenantError(
          `Unknown tenant ${JSON.stringify(tenant)} (multiTenant.strict): known tenants are ${Object.keys(multi.tenants).join(', ')}`,
        );
      }
      return this.global;
    }
    return this.tenantStore(tenant);
  }

  /** The global store's ping, when it has one (a SQL store's `SELECT 1`). */
  ping(): (() => Promise<void>) | undefined {
    const store = this.global;
    return store.ping ? () => store.ping!() : undefined;
  }

  /** Every store cleanup must sweep: the global one and every listed or used tenant's. */
  async all(): Promise<FailoverStore[]> {
    const multi = this.options.multiTenant;
    if (!multi) return [this.global];
    const tenants = await Promise.all(Object.keys(multi.tenants).map((t) => this.tenantStore(t)));
    return [this.global, ...tenants];
  }

  tenantStore(tenant: string): Promise<FailoverStore> {
    let store = this.tenantStores.get(tenant);
    if (!store) {
      store = this.build(tenant);
      this.tenantStores.set(tenant, store);
      store.catch(() => this.tenantStores.delete(tenant));
    }
    return store;
  }

  private async build(tenant: string): Promise<FailoverStore> {
    this.built++;
    const tenantPrefix = this.options.multiTenant!.tenants[tenant].tablePrefix;
    if (this.options.store.type === 'memory') return new MemoryFailoverStore(this.options.store.maxEntries);
    const globalStore = this.global as SqlFailoverStore;
    const prefix = `${tenantPrefix}${(this.options.store as SqlStoreOptions).tablePrefix ?? ''}`;
    this.logger.log(`Tenant '${tenant}' uses ${tableName(prefix, FAILOVER_STORE_TABLE.name)}`);
    return globalStore.withTablePrefix(prefix).init();
  }
}
