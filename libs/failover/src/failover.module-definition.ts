import { ConfigurableModuleBuilder, type Type } from '@nestjs/common';
import { DatabaseResolver } from '@holdfast/core/kit';
import { FailoverCleanupService } from './cleanup/failover-cleanup.service';
import { FailoverExecutor } from './executor/failover-executor';
import { FailoverRegistry } from './executor/failover.registry';
import { FAILOVER_KEY_GENERATOR } from './failover.constants';
import { FAILOVER_STORES, getFailoverKeyGeneratorToken, getFailoverStoreToken } from './failover.tokens';
import { FailoverHealthIndicator } from './health/failover.health';
import { FailoverMetrics } from './health/failover.metrics';
import type { FailoverModuleOptions } from './options/failover-module.options';
import { FailoverTypeRegistry } from './payload/failover-type.registry';
import { FailoverStoreQueryResolver } from './store/failover-store-query.resolver';
import { PayloadColumnResolver } from './store/payload-column.resolver';
import { FailoverStores } from './tenant/failover-stores';

/** forRoot extras: known before any options factory runs, so they can shape the module. */
export interface FailoverModuleExtras {
  /** Global unless `false` (as every Holdfast module): @Failover() methods may live in any module. */
  isGlobal?: boolean;
  /**
   * A second (third, …) failover store in one application, with its own options (give it its own
   * DataSource or `tablePrefix`): its services are exported under `getFailoverToken(Class, name)`
   * and injected with `@InjectFailoverExecutor(name)`, `@InjectFailoverStore(name)`,
   * `@InjectFailoverOptions(name)`; it serves only `@Failover({ store: name, … })` methods.
   * Without a name (or `'default'`) the module is the default one, exported under the classes
   * themselves.
   */
  name?: string;
}

const EXPORTED_SERVICES: Array<Type<unknown>> = [
  DatabaseResolver,
  FailoverStoreQueryResolver,
  PayloadColumnResolver,
  FailoverTypeRegistry,
  FailoverExecutor,
  FailoverStores,
  FailoverRegistry,
  FailoverCleanupService,
  FailoverHealthIndicator,
  FailoverMetrics,
];

export const {
  ConfigurableModuleClass: FailoverConfigurableModule,
  MODULE_OPTIONS_TOKEN: FAILOVER_MODULE_OPTIONS,
  OPTIONS_TYPE: FAILOVER_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: FAILOVER_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<FailoverModuleOptions>({ moduleName: 'Failover' })
  .setClassMethodName('forRoot')
  // Global by default: @Failover() methods may live in any module of the app.
  .setExtras<FailoverModuleExtras>(
    { isGlobal: true, name: undefined },
    FAILOVER_STORES.extras(EXPORTED_SERVICES, [
      { token: getFailoverStoreToken(), named: (name) => FAILOVER_STORES.key('store', name) },
      { token: FAILOVER_KEY_GENERATOR, named: getFailoverKeyGeneratorToken },
    ]),
  )
  .build();
