import { ConfigurableModuleBuilder, type Provider, type Type } from '@nestjs/common';
import { DatabaseResolver } from '@holdfast/core';
import { FailoverCleanupService } from './cleanup/failover-cleanup.service';
import { FailoverConfigurationError } from './errors';
import { FailoverExecutor } from './executor/failover-executor';
import { FailoverRegistry } from './executor/failover.registry';
import {
  DEFAULT_FAILOVER_STORE,
  FAILOVER_RESOLVED_OPTIONS,
  FAILOVER_STORE_NAME,
  getFailoverStoreToken,
} from './failover.constants';
import { getFailoverOptionsToken, getFailoverToken } from './failover.tokens';
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

/** The default module exports its classes; a named one exports aliases under its own tokens. */
function namedStore(name: string | undefined): {
  providers: Provider[];
  exports: Array<Provider | string | symbol>;
} {
  if (name !== undefined && (typeof name !== 'string' || name.trim() === '' || name !== name.trim())) {
    throw new FailoverConfigurationError(
      `FailoverModule.forRoot({ name }): the name must be a non-empty string without surrounding spaces, got ${JSON.stringify(name)}`,
    );
  }
  const storeName = name ?? DEFAULT_FAILOVER_STORE;
  const nameProvider: Provider = { provide: FAILOVER_STORE_NAME, useValue: storeName };
  if (storeName === DEFAULT_FAILOVER_STORE) {
    return {
      providers: [nameProvider],
      exports: [FAILOVER_RESOLVED_OPTIONS, getFailoverStoreToken(), ...EXPORTED_SERVICES],
    };
  }
  const aliases: Provider[] = [
    { provide: getFailoverOptionsToken(storeName), useExisting: FAILOVER_RESOLVED_OPTIONS },
    { provide: getFailoverStoreToken(storeName), useExisting: getFailoverStoreToken() },
    ...EXPORTED_SERVICES.map((service) => ({
      provide: getFailoverToken(service, storeName),
      useExisting: service,
    })),
  ];
  return {
    providers: [nameProvider, ...aliases],
    exports: aliases.map((alias) => (alias as { provide: string }).provide),
  };
}

export const {
  ConfigurableModuleClass: FailoverConfigurableModule,
  MODULE_OPTIONS_TOKEN: FAILOVER_MODULE_OPTIONS,
  OPTIONS_TYPE: FAILOVER_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: FAILOVER_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<FailoverModuleOptions>({ moduleName: 'Failover' })
  .setClassMethodName('forRoot')
  // Global by default: @Failover() methods may live in any module of the app.
  .setExtras<FailoverModuleExtras>({ isGlobal: true, name: undefined }, (definition, extras) => {
    const named = namedStore(extras.name);
    return {
      ...definition,
      global: extras.isGlobal,
      providers: [...(definition.providers ?? []), ...named.providers],
      exports: [...(definition.exports ?? []), ...named.exports],
    };
  })
  .build();
