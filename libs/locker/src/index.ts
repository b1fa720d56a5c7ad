// @holdfast/locker: one master among an application's instances (LockerModule), and
// @ScheduledLock() jobs that run on one instance per tick (ScheduledLockModule). What each group is for:

// The master/standby module: import it, ask LockerService who is master, inject its options.
export { LockerModule } from './locker.module';
export { InjectLockerOptions } from './locker.decorators';
export { LockerService, type LockerRole } from './service/locker.service';
// Readiness for @nestjs/terminus: whether the lock store answers and who is master.
export { LockerHealthIndicator } from './health/locker.health';
// Methods called when this instance becomes master or stops being it.
export {
  OnLockAcquired,
  OnLockLost,
  type LockAcquiredEvent,
  type LockLostEvent,
  type LockLostReason,
  type LockHandlerOptions,
} from './decorators/on-lock.decorators';
// A locker of your own (`locker: 'custom'`): the interface and the acquire loop to extend.
export type { Locker, LockerContext } from './lock/locker.interface';
export { AbstractLocker } from './lock/abstract.locker';
// The module's options, per locker kind.
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
// The errors a caller can meet (README, "Errors"): each a HoldfastError with a code.
export {
  LockHeldError,
  LockTimingError,
  LockerConfigurationError,
  InvalidLockerError,
  GaleraRowLockError,
  FileLockUnavailableError,
  LockStatementTimeoutError,
  ScheduledLockNotReadyError,
} from './errors';
// @ScheduledLock(): a scheduled method run by one instance per tick, and its module and options.
export { ScheduledLock } from './scheduled/scheduled-lock.decorator';
export { ScheduledLockModule } from './scheduled/scheduled-lock.module';
export type { ScheduledLockOptions } from './scheduled/scheduled-lock.options';
export type { ScheduledLockModuleOptions } from './locker.options';
export { ScheduledLockConfigurationError } from './errors';
// The status read-model (and the operator's commands) on this lib's tables: for the CLI, the dashboard, tools.
export * from './status';
