import { Module, type DynamicModule } from '@nestjs/common';
import {
  ConfigurableScheduledLockModule,
  type SCHEDULED_LOCK_OPTIONS_TYPE,
} from '../locker.module-definition';
import { createDatabaseResolverProvider, createScheduledLockOptionsProvider } from '../locker.providers';
import { ScheduledLockExecutor } from './scheduled-lock.executor';

/**
 * Provides what @ScheduledLock() methods need, globally (decorated providers can live in any
 * module): `ScheduledLockModule.forRoot({ dataSource?, tablePrefix?, schema? })`, or
 * `forRootAsync({ useFactory, inject })`, next to `ScheduleModule.forRoot()`.
 */
@Module({
  providers: [createScheduledLockOptionsProvider(), createDatabaseResolverProvider(), ScheduledLockExecutor],
  exports: [ScheduledLockExecutor],
})
export class ScheduledLockModule extends ConfigurableScheduledLockModule {
  /** Every option has a default: `forRoot()` alone uses the default DataSource, no prefix. */
  static override forRoot(options: typeof SCHEDULED_LOCK_OPTIONS_TYPE = {}): DynamicModule {
    return super.forRoot(options);
  }
}
