import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { LockerModuleOptions } from './options/locker.options';

/** What a class passed to forRootAsync({ useClass | useExisting }) implements. */
export interface LockerOptionsFactory {
  createLockerOptions(): LockerModuleOptions | Promise<LockerModuleOptions>;
}

export const {
  ConfigurableModuleClass: ConfigurableLockerModule,
  MODULE_OPTIONS_TOKEN: LOCKER_MODULE_OPTIONS,
  OPTIONS_TYPE: LOCKER_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: LOCKER_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<LockerModuleOptions>({ moduleName: 'Locker' })
  .setClassMethodName('forRoot')
  // forRootAsync({ useClass | useExisting }) calls this method of the given class.
  .setFactoryMethodName('createLockerOptions')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
