/** Metadata key of @Failover() on a method. */
export const FAILOVER_METADATA = 'holdfast:failover';
/** Property on decorated instances that receives the FailoverExecutor by property injection. */
export const FAILOVER_EXECUTOR_PROPERTY = Symbol('holdfast:failover-executor');
/** The validated, defaulted module options. */
export const FAILOVER_RESOLVED_OPTIONS = Symbol('holdfast:failover-resolved-options');
const FAILOVER_STORE = Symbol('holdfast:failover-store');

/** Injection token of the active FailoverStore: `@Inject(getFailoverStoreToken())`. */
export function getFailoverStoreToken(): symbol {
  return FAILOVER_STORE;
}
