export { LockerModule } from './locker.module';
export {
  LOCKER_MODULE_OPTIONS,
  LOCKER_OPTIONS_TYPE,
  LOCKER_ASYNC_OPTIONS_TYPE,
} from './locker-module.definition';
export { LOCKER_OPTIONS } from './locker.constants';
export { LockerService, type LockerRole } from './service/locker.service';
export { LockerHealthIndicator } from './health/locker.health';
export {
  OnLockAcquired,
  OnLockLost,
  type LockAcquiredEvent,
  type LockLostEvent,
  type LockLostReason,
  type LockHandlerOptions,
} from './decorators/on-lock.decorators';
export type { Locker, LockerContext } from './lock/locker.interface';
export { AbstractLocker } from './lock/abstract.locker';
export { LeaseDatabaseLocker } from './lock/lease-database.locker';
export { DatabaseLocker } from './lock/database.locker';
export { SharedFileLocker } from './lock/shared-file.locker';
export { HOLDFAST_LOCK_TABLE } from './store/holdfast-lock.table';
export { LockQueryResolver } from './store/lock-query.resolver';
export {
  LOCKER_TYPES,
  STARTUP_MODES,
  LOCKER_DEFAULTS,
  resolveLockerOptions,
  type LockerModuleOptions,
  type ResolvedLockerOptions,
  type LockerKindOptions,
  type LeaseDatabaseLockerOptions,
  type DatabaseLockerOptions,
  type SharedFileLockerOptions,
  type CustomLockerOptions,
  type LockerType,
  type StartupMode,
} from './options/locker.options';
export { LockHeldError, LockTimingError, LockerConfigurationError, InvalidLockerError } from './errors';
export { ScheduledLock } from './scheduled/scheduled-lock.decorator';
export { ScheduledLockModule } from './scheduled/scheduled-lock.module';
export { ScheduledLockExecutor } from './scheduled/scheduled-lock.executor';
export type { ScheduledLockOptions } from './scheduled/scheduled-lock.options';
export type { ScheduledLockModuleOptions } from './scheduled/scheduled-lock.module-options';
export { ScheduledLockConfigurationError } from './errors';
