import type { Provider } from '@nestjs/common';
import { DatabaseResolver } from '@holdfast/core/kit';
import type { LockerModuleOptions, ScheduledLockModuleOptions } from './locker.options';
import { resolveLockerOptions } from './options/locker-options.schema';
import { resolveScheduledLockModuleOptions } from './options/scheduled-lock-options.schema';
import {
  LOCKER_MODULE_OPTIONS,
  LOCKER_OPTIONS,
  SCHEDULED_LOCK_MODULE_OPTIONS,
  SCHEDULED_LOCK_OPTIONS,
} from './locker.tokens';

/** The one place options get defaults and validation, for forRoot and forRootAsync alike. */
export function createResolvedOptionsProvider(): Provider {
  return {
    provide: LOCKER_OPTIONS,
    useFactory: (options: LockerModuleOptions) => resolveLockerOptions(options),
    inject: [LOCKER_MODULE_OPTIONS],
  };
}

/** As createResolvedOptionsProvider, for ScheduledLockModule. */
export function createScheduledLockOptionsProvider(): Provider {
  return {
    provide: SCHEDULED_LOCK_OPTIONS,
    useFactory: (options: ScheduledLockModuleOptions | undefined) =>
      resolveScheduledLockModuleOptions(options),
    inject: [SCHEDULED_LOCK_MODULE_OPTIONS],
  };
}

/** Dialect detection; replace it by providing your own DatabaseResolver. */
export function createDatabaseResolverProvider(): Provider {
  return { provide: DatabaseResolver, useClass: DatabaseResolver };
}
