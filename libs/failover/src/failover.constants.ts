import { DEFAULT_INSTANCE_NAME } from '@holdfast/core';
/** Metadata key of @Failover() on a method. */
export const FAILOVER_METADATA = 'holdfast:failover';
/** Property on decorated instances that receives the FailoverExecutor by property injection. */
export const FAILOVER_EXECUTOR_PROPERTY = Symbol('holdfast:failover-executor');
const NAMED_EXECUTOR_PROPERTIES = new Map<string, symbol>();
/** The validated, defaulted module options. */
export const FAILOVER_RESOLVED_OPTIONS = Symbol('holdfast:failover-resolved-options');
/** The name of the store a module registers (`forRoot({ name })`), `DEFAULT_FAILOVER_STORE` without one. */
export const FAILOVER_STORE_NAME = Symbol('holdfast:failover-store-name');
export const DEFAULT_FAILOVER_STORE = DEFAULT_INSTANCE_NAME;
const FAILOVER_STORE = Symbol('holdfast:failover-store');

/** Whether `name` designates the default (unnamed) FailoverModule. */
export function isDefaultFailoverStore(name: string | undefined): boolean {
  return name === undefined || name === DEFAULT_FAILOVER_STORE;
}

/**
 * Injection token of the active FailoverStore: `@Inject(getFailoverStoreToken())`; with a name,
 * that of the FailoverModule registered with that `name`.
 */
export function getFailoverStoreToken(): symbol;
export function getFailoverStoreToken(name: string | undefined): symbol | string;
export function getFailoverStoreToken(name?: string): symbol | string {
  return isDefaultFailoverStore(name) ? FAILOVER_STORE : `holdfast:failover:${name}:store`;
}

/**
 * The name a SchedulerRegistry entry (cron job, timeout) of one FailoverModule is registered
 * under: `holdfast:failover:<what>` for the default module (unchanged), and
 * `holdfast:failover:<name>:<what>` for a named one, so two modules never collide.
 */
export function failoverJobName(what: string, storeName: string | undefined): string {
  return isDefaultFailoverStore(storeName)
    ? `holdfast:failover:${what}`
    : `holdfast:failover:${storeName}:${what}`;
}

/**
 * The property a decorated instance receives a store's FailoverExecutor in: one per store name,
 * so methods of one class may use different stores. Resolved when the method is decorated.
 */
export function failoverExecutorProperty(storeName: string | undefined): symbol {
  if (isDefaultFailoverStore(storeName)) return FAILOVER_EXECUTOR_PROPERTY;
  let property = NAMED_EXECUTOR_PROPERTIES.get(storeName!);
  if (!property) {
    property = Symbol(`holdfast:failover-executor:${storeName}`);
    NAMED_EXECUTOR_PROPERTIES.set(storeName!, property);
  }
  return property;
}
