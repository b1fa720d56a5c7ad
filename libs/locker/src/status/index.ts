export {
  lockTable,
  readLockerStatus,
  releaseLock,
  type LockerStatus,
  type LockReleaseOutcome,
  type LockStatus,
  type LockTableOptions,
} from './locker-status';
