import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { FailoverModuleOptions } from './options/failover-module.options';

export const {
  ConfigurableModuleClass: FailoverConfigurableModule,
  MODULE_OPTIONS_TOKEN: FAILOVER_MODULE_OPTIONS,
  OPTIONS_TYPE: FAILOVER_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: FAILOVER_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<FailoverModuleOptions>({ moduleName: 'Failover' })
  .setClassMethodName('forRoot')
  // Global by default: @Failover() methods may live in any module of the app.
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
