import { ConfigurableModuleBuilder, type Type } from '@nestjs/common';
import { FailoverCleanupService } from './cleanup/failover-cleanup.service';
import { FailoverExecutor } from './executor/failover-executor';
import {
  FAILOVER_KEY_GENERATOR,
  FAILOVER_STORES,
  getFailoverKeyGeneratorToken,
  getFailoverStoreToken,
} from './failover.tokens';
import { FailoverHealthIndicator } from './health/failover.health';
import { FailoverMetrics } from './metrics/failover.metrics';
import type { FailoverModuleOptions } from './failover.options';
import { FailoverStoreQueryResolver } from './store/failover-store-query.resolver';
import { PayloadColumnResolver } from './store/payload-column.resolver';

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

/**
 * What an application injects (beside the store, the key generator and the options, exported
 * under their tokens): the operations (executor, cleanup, health, metrics) and the replaceable
 * SQL and PAYLOAD parts. The rest (registry, tenant stores, type registry) stays inside.
 */
const EXPORTED_SERVICES: Array<Type<unknown>> = [
  FailoverExecutor,
  FailoverCleanupService,
  FailoverHealthIndicator,
  FailoverMetrics,
  FailoverStoreQueryResolver,
  PayloadColumnResolver,
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
