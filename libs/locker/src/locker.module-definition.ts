import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { LockerModuleOptions, ScheduledLockModuleOptions } from './locker.options';
import { LOCKER_MODULE_OPTIONS, SCHEDULED_LOCK_MODULE_OPTIONS } from './locker.tokens';

/** What a class passed to `LockerModule.forRootAsync({ useClass | useExisting })` implements. */
export interface LockerOptionsFactory {
  createLockerOptions(): LockerModuleOptions | Promise<LockerModuleOptions>;
}

export const {
  ConfigurableModuleClass: ConfigurableLockerModule,
  OPTIONS_TYPE: LOCKER_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: LOCKER_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<LockerModuleOptions>({
  moduleName: 'Locker',
  optionsInjectionToken: LOCKER_MODULE_OPTIONS,
})
  .setClassMethodName('forRoot')
  // forRootAsync({ useClass | useExisting }) calls this method of the given class.
  .setFactoryMethodName('createLockerOptions')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();

/** What a class passed to `ScheduledLockModule.forRootAsync({ useClass | useExisting })` implements. */
export interface ScheduledLockOptionsFactory {
  createScheduledLockOptions(): ScheduledLockModuleOptions | Promise<ScheduledLockModuleOptions>;
}

export const {
  ConfigurableModuleClass: ConfigurableScheduledLockModule,
  OPTIONS_TYPE: SCHEDULED_LOCK_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: SCHEDULED_LOCK_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<ScheduledLockModuleOptions>({
  moduleName: 'ScheduledLock',
  optionsInjectionToken: SCHEDULED_LOCK_MODULE_OPTIONS,
})
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createScheduledLockOptions')
  // Global by default: @ScheduledLock() providers can live in any module.
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
