import type { Type } from '@nestjs/common';
import { FAILOVER_RESOLVED_OPTIONS, isDefaultFailoverStore } from './failover.constants';

/**
 * The injection token of one FailoverModule's service, as `getDataSourceToken(name)` in
 * `@nestjs/typeorm` (and `getInboxToken` in `@holdfast/inbox`): the class itself for the default
 * module (`app.get(FailoverExecutor)`), and `holdfast:failover:<name>:<Class>` for the module
 * registered with `name`.
 */
export function getFailoverToken<T>(service: Type<T>, name?: string): Type<T> | string {
  return isDefaultFailoverStore(name) ? service : `holdfast:failover:${name}:${service.name}`;
}

/** The token of one FailoverModule's validated options (`@InjectFailoverOptions(name)`). */
export function getFailoverOptionsToken(name?: string): symbol | string {
  return isDefaultFailoverStore(name) ? FAILOVER_RESOLVED_OPTIONS : `holdfast:failover:${name}:options`;
}
