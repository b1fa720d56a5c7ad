import { DEFAULT_INSTANCE_NAME } from '@holdfast/core/kit';
/** Metadata key of @Failover() on a method. */
export const FAILOVER_METADATA = 'holdfast:failover';
/** Property on decorated instances that receives the FailoverExecutor by property injection. */
export const FAILOVER_EXECUTOR_PROPERTY = Symbol('holdfast:failover-executor');
/** The validated, defaulted module options. */
export const FAILOVER_RESOLVED_OPTIONS = Symbol('holdfast:failover-resolved-options');
/** The name of the store a module registers (`forRoot({ name })`), `DEFAULT_FAILOVER_STORE` without one. */
export const FAILOVER_STORE_NAME = Symbol('holdfast:failover-store-name');
export const DEFAULT_FAILOVER_STORE = DEFAULT_INSTANCE_NAME;
/**
 * The key generator of failovers without their own `keyGenerator`: FailoverModule registers
 * `DefaultKeyGenerator` (or `InjectiveKeyGenerator` with `keys: 'injective'`) under it; a provider
 * the application registers under it replaces that one.
 */
export const FAILOVER_KEY_GENERATOR = 'holdfast:failover:key-generator';
/** The default FailoverModule's store (`getFailoverStoreToken()`). */
export const FAILOVER_STORE = Symbol('holdfast:failover-store');
