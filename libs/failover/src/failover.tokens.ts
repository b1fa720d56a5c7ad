import type { Type } from '@nestjs/common';
import { NamedInstances } from '@holdfast/core/kit';
import { FailoverConfigurationError } from './errors';
import { FAILOVER_EXECUTOR_PROPERTY } from './failover.constants';

/** The validated, defaulted module options. */
export const FAILOVER_RESOLVED_OPTIONS = Symbol('holdfast:failover:resolved-options');
/** The name of the store a module registers (`forRoot({ name })`), `DEFAULT_FAILOVER_STORE` without one. */
export const FAILOVER_STORE_NAME = Symbol('holdfast:failover:store-name');
/**
 * The key generator of failovers without their own `keyGenerator`: FailoverModule registers
 * `DefaultKeyGenerator` (or `InjectiveKeyGenerator` with `keys: 'injective'`) under it; a provider
 * the application registers under it replaces that one. A string: applications register their
 * own provider under it (documented in the README).
 */
export const FAILOVER_KEY_GENERATOR = 'holdfast:failover:key-generator';
/** The default FailoverModule's store (`getFailoverStoreToken()`). */
export const FAILOVER_STORE = Symbol('holdfast:failover:store');

/**
 * The FailoverModules of an application: the default one, and those registered with
 * `forRoot({ name })`. Every name of one module (tokens, scheduler jobs) is spelled by it.
 */
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

/**
 * Injection token of the active FailoverStore: `@Inject(getFailoverStoreToken())`; with a name,
 * that of the FailoverModule registered with that `name` (`holdfast:failover:<name>:store`).
 */
export function getFailoverStoreToken(): symbol;
export function getFailoverStoreToken(name: string | undefined): symbol | string;
export function getFailoverStoreToken(name?: string): symbol | string {
  return FAILOVER_STORES.isDefault(name) ? FAILOVER_STORE : FAILOVER_STORES.key('store', name);
}

/**
 * The token of a FailoverModule's default key generator: `FAILOVER_KEY_GENERATOR`
 * (`holdfast:failover:key-generator`), and `holdfast:failover:<name>:key-generator` for the module
 * registered with `name`.
 */
export function getFailoverKeyGeneratorToken(name?: string): string {
  return FAILOVER_STORES.isDefault(name)
    ? FAILOVER_KEY_GENERATOR
    : FAILOVER_STORES.key('key-generator', name);
}

/**
 * The name a SchedulerRegistry entry (cron job, timeout) of one FailoverModule is registered
 * under: `holdfast:failover:<what>` for the default module, and
 * `holdfast:failover:<name>:<what>` for a named one, so two modules never collide.
 */
export function failoverJobName(what: string, storeName: string | undefined): string {
  return FAILOVER_STORES.key(what, storeName);
}

const NAMED_EXECUTOR_PROPERTIES = new Map<string, symbol>();

/**
 * The property a decorated instance receives a store's FailoverExecutor in: one per store name,
 * so methods of one class may use different stores. Resolved when the method is decorated.
 */
export function failoverExecutorProperty(storeName: string | undefined): symbol {
  if (FAILOVER_STORES.isDefault(storeName)) return FAILOVER_EXECUTOR_PROPERTY;
  let property = NAMED_EXECUTOR_PROPERTIES.get(storeName!);
  if (!property) {
    property = Symbol(`holdfast:failover-executor:${storeName}`);
    NAMED_EXECUTOR_PROPERTIES.set(storeName!, property);
  }
  return property;
}
