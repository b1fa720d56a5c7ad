import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { SimbaModuleOptions } from './simba.options';
import { SIMBA_MODULE_OPTIONS } from './simba.tokens';

export const {
  ConfigurableModuleClass: SimbaConfigurableModule,
  OPTIONS_TYPE: SIMBA_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: SIMBA_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<SimbaModuleOptions>({
  moduleName: 'Simba',
  optionsInjectionToken: SIMBA_MODULE_OPTIONS,
})
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
