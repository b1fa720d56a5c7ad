export {
  lockTable,
  readLockerStatus,
  releaseLock,
  type LockerStatus,
  type LockReleaseOutcome,
  type LockStatus,
  type LockTableOptions,
} from './locker-status';
export { LOCKER_STATUS_TOKENS, LOCKER_TABLES } from './locker-module-parts';
