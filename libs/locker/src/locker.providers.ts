import type { Provider } from '@nestjs/common';
import { DatabaseResolver } from '@holdfast/core/kit';
import { LOCKER_OPTIONS } from './locker.constants';
import { LOCKER_MODULE_OPTIONS } from './locker-module.definition';
import { resolveLockerOptions, type LockerModuleOptions } from './options/locker.options';

/** The one place options get defaults and validation, for forRoot and forRootAsync alike. */
export function createResolvedOptionsProvider(): Provider {
  return {
    provide: LOCKER_OPTIONS,
    useFactory: (options: LockerModuleOptions) => resolveLockerOptions(options),
    inject: [LOCKER_MODULE_OPTIONS],
  };
}

/** Dialect detection; replace it by providing your own DatabaseResolver. */
export function createDatabaseResolverProvider(): Provider {
  return { provide: DatabaseResolver, useClass: DatabaseResolver };
}
