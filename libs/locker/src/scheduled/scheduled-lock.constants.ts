/** Where @ScheduledLock() keeps its executor on the decorated provider (property injection). */
export const SCHEDULED_LOCK_EXECUTOR_PROPERTY = Symbol('holdfast:scheduled-lock-executor');
/** The metadata key of a decorated method's ScheduledLockMetadata. */
export const SCHEDULED_LOCK_METADATA = 'holdfast:scheduled-lock';
/** The resolved ScheduledLockModule options. */
export const SCHEDULED_LOCK_MODULE_OPTIONS = Symbol('holdfast:scheduled-lock-module-options');
