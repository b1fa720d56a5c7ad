export { LockerModule } from './locker.module';
export { InjectLockerOptions } from './locker.decorators';
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
export type {
  LockerModuleOptions,
  ResolvedLockerOptions,
  LockerKindOptions,
  LeaseDatabaseLockerOptions,
  DatabaseLockerOptions,
  SharedFileLockerOptions,
  SharedFileMode,
  CustomLockerOptions,
  LockerType,
  StartupMode,
} from './locker.options';
export {
  LockHeldError,
  LockTimingError,
  LockerConfigurationError,
  InvalidLockerError,
  GaleraRowLockError,
  FileLockUnavailableError,
} from './errors';
export { ScheduledLock } from './scheduled/scheduled-lock.decorator';
export { ScheduledLockModule } from './scheduled/scheduled-lock.module';
export type { ScheduledLockOptions } from './scheduled/scheduled-lock.options';
export type { ScheduledLockModuleOptions } from './locker.options';
export { ScheduledLockConfigurationError } from './errors';
// The status read-model (and the operator's commands) on this lib's tables: for the CLI, the dashboard, tools.
export * from './status';
