/** The validated options with defaults applied (ResolvedLockerOptions). */
export const LOCKER_OPTIONS = Symbol('holdfast:locker:options');
/** Metadata key of @OnLockAcquired handlers. */
export const LOCK_ACQUIRED_HANDLER = 'holdfast:locker:on-lock-acquired';
/** Metadata key of @OnLockLost handlers. */
export const LOCK_LOST_HANDLER = 'holdfast:locker:on-lock-lost';
