import type { Type } from '@nestjs/common';
import { NamedInstances } from '@holdfast/core';
import { FailoverConfigurationError } from './errors';
import { FAILOVER_RESOLVED_OPTIONS, FAILOVER_STORE_NAME } from './failover.constants';

/** The FailoverModules of an application: the default one, and those registered with `forRoot({ name })`. */
export const FAILOVER_STORES = new NamedInstances({
  lib: 'failover',
  optionsToken: FAILOVER_RESOLVED_OPTIONS,
  nameToken: FAILOVER_STORE_NAME,
  invalidName: (message) => new FailoverConfigurationError(`FailoverModule.${message}`),
});

/**
 * The injection token of one FailoverModule's service, as `getDataSourceToken(name)` in
 * `@nestjs/typeorm` (and `getInboxToken` in `@holdfast/inbox`): the class itself for the default
 * module (`app.get(FailoverExecutor)`), and `holdfast:failover:<name>:<Class>` for the module
 * registered with `name`.
 */
export function getFailoverToken<T>(service: Type<T>, name?: string): Type<T> | string {
  return FAILOVER_STORES.token(service, name);
}

/** The token of one FailoverModule's validated options (`@InjectFailoverOptions(name)`). */
export function getFailoverOptionsToken(name?: string): symbol | string {
  return FAILOVER_STORES.optionsToken(name);
}
