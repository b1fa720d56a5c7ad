import { Module, type DynamicModule } from '@nestjs/common';
import { DatabaseResolver } from '@holdfast/core/kit';
import { SCHEDULED_LOCK_MODULE_OPTIONS } from './scheduled-lock.constants';
import { ScheduledLockExecutor } from './scheduled-lock.executor';
import {
  resolveScheduledLockModuleOptions,
  type ScheduledLockModuleOptions,
} from './scheduled-lock.module-options';

/**
 * Provides what @ScheduledLock() methods need, globally (decorated providers can live in any
 * module): `ScheduledLockModule.forRoot({ dataSource?, tablePrefix?, schema? })`, next to
 * `ScheduleModule.forRoot()`.
 */
@Module({})
export class ScheduledLockModule {
  static forRoot(options: ScheduledLockModuleOptions = {}): DynamicModule {
    return {
      module: ScheduledLockModule,
      global: true,
      providers: [
        {
          provide: SCHEDULED_LOCK_MODULE_OPTIONS,
          useFactory: () => resolveScheduledLockModuleOptions(options),
        },
        { provide: DatabaseResolver, useClass: DatabaseResolver },
        ScheduledLockExecutor,
      ],
      exports: [ScheduledLockExecutor],
    };
  }
}
