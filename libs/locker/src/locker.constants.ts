import type { SchemaMode } from '@holdfast/core/kit';
import type { StartupMode } from './locker.options';

/** Metadata key of @OnLockAcquired handlers. */
export const LOCK_ACQUIRED_HANDLER = 'holdfast:locker:on-lock-acquired';
/** Metadata key of @OnLockLost handlers. */
export const LOCK_LOST_HANDLER = 'holdfast:locker:on-lock-lost';
/** The metadata key of a @ScheduledLock() method's ScheduledLockMetadata. */
export const SCHEDULED_LOCK_METADATA = 'holdfast:locker:scheduled-lock';
/** Where @ScheduledLock() keeps its executor on the decorated provider (property injection). */
export const SCHEDULED_LOCK_EXECUTOR_PROPERTY = Symbol('holdfast:locker:scheduled-lock-executor');

/** LockerModule's defaults (ActiveMQ's, where it has one). */
export const LOCKER_DEFAULTS = {
  lockName: 'default',
  lockAcquireSleepInterval: 10_000,
  failIfLocked: false,
  useLock: true,
  startup: 'block' as StartupMode,
  schema: 'check' as SchemaMode,
  tablePrefix: '',
  sharedFileStale: 10_000,
  /** ActiveMQ's JDBCPersistenceAdapter default (DEFAULT_LOCK_KEEP_ALIVE_PERIOD). */
  databaseKeepAlive: 30_000,
  /** ActiveMQ's Lockable default: no keep-alive (the shared-file locker warns about it). */
  sharedFileKeepAlive: 0,
};
