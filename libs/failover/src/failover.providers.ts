import type { Provider } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { DatabaseResolver } from '@holdfast/core/kit';
import { FAILOVER_KEY_GENERATOR, FAILOVER_RESOLVED_OPTIONS } from './failover.tokens';
import { moduleKeyGenerator } from './key/module-key-generator';
import { getFailoverStoreToken } from './failover.tokens';
import { FAILOVER_MODULE_OPTIONS } from './failover.module-definition';
import type { FailoverModuleOptions, ResolvedFailoverOptions } from './failover.options';
import { resolveFailoverOptions } from './options/failover-options.schema';
import { PayloadCodec } from './payload/payload-codec';
import { createFailoverStore } from './store/failover-store.factory';
import { FailoverStoreQueryResolver } from './store/failover-store-query.resolver';
import { PayloadColumnResolver } from './store/payload-column.resolver';

/** Defaults merged and options validated once, for forRoot and forRootAsync alike. */
export const resolvedOptionsProvider: Provider = {
  provide: FAILOVER_RESOLVED_OPTIONS,
  useFactory: (options: FailoverModuleOptions) => resolveFailoverOptions(options),
  inject: [FAILOVER_MODULE_OPTIONS],
};

/** The module's key generator (`keys`), replaceable by the application's own provider. */
export const keyGeneratorProvider: Provider = {
  provide: FAILOVER_KEY_GENERATOR,
  useFactory: (options: ResolvedFailoverOptions) => moduleKeyGenerator(options.keys),
  inject: [FAILOVER_RESOLVED_OPTIONS],
};

export const storeProvider: Provider = {
  provide: getFailoverStoreToken(),
  useFactory: createFailoverStore,
  inject: [
    FAILOVER_RESOLVED_OPTIONS,
    ModuleRef,
    PayloadCodec,
    FailoverStoreQueryResolver,
    PayloadColumnResolver,
    DatabaseResolver,
  ],
};
