// @holdfast/locker/internal: plumbing shared with Holdfast's own packages (@holdfast/cli,
// @holdfast/dashboard), its benchmarks and tests. Not part of the public API: no stability
// promise between versions. Applications use the main entry, '@holdfast/locker'.
export { LOCKER_OPTIONS, SCHEDULED_LOCK_OPTIONS } from './locker.tokens';
export { LockQueryResolver, type LeaseClaim } from './store/lock-query.resolver';
export { LeaseDatabaseLocker } from './lock/lease-database.locker';
export { DatabaseLocker } from './lock/database.locker';
export { SharedFileLocker } from './lock/shared-file.locker';
export { MtimeFileLocker } from './lock/mtime-file.locker';
export { LOCKER_TYPES, SHARED_FILE_MODES, STARTUP_MODES } from './locker.options';
export { LOCKER_DEFAULTS } from './locker.constants';
export { resolveLockerOptions } from './options/locker-options.schema';
export { ScheduledLockExecutor } from './scheduled/scheduled-lock.executor';
export { readLockStatus, selectLockStatus, toLockStatus, type LockStatus } from './store/lock-status';
export type { ScheduledJobActivity } from './scheduled/scheduled-lock.executor';
