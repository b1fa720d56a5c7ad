/** Metadata key of @OnLockAcquired handlers. */
export const LOCK_ACQUIRED_HANDLER = 'holdfast:locker:on-lock-acquired';
/** Metadata key of @OnLockLost handlers. */
export const LOCK_LOST_HANDLER = 'holdfast:locker:on-lock-lost';
/** The metadata key of a @ScheduledLock() method's ScheduledLockMetadata. */
export const SCHEDULED_LOCK_METADATA = 'holdfast:locker:scheduled-lock';
/** Where @ScheduledLock() keeps its executor on the decorated provider (property injection). */
export const SCHEDULED_LOCK_EXECUTOR_PROPERTY = Symbol('holdfast:locker:scheduled-lock-executor');
