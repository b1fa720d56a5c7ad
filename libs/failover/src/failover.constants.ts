import { DEFAULT_INSTANCE_NAME } from '@holdfast/core/kit';
/** Metadata key of @Failover() on a method. */
export const FAILOVER_METADATA = 'holdfast:failover';
/** Property on decorated instances that receives the FailoverExecutor by property injection. */
export const FAILOVER_EXECUTOR_PROPERTY = Symbol('holdfast:failover:executor');
/** The name of the module registered without a name. */
export const DEFAULT_FAILOVER_STORE = DEFAULT_INSTANCE_NAME;
