import { SetMetadata } from '@nestjs/common';
import { LOCK_ACQUIRED_HANDLER, LOCK_LOST_HANDLER } from '../locker.constants';

/** What a handler is told when this instance becomes master. */
export interface LockAcquiredEvent {
  lockName: string;
  holder: string;
}

export type LockLostReason = 'keep-alive-false' | 'keep-alive-failed' | 'stopped';

/** What a handler is told when this instance stops being master. */
export interface LockLostEvent {
  lockName: string;
  reason: LockLostReason;
  error?: unknown;
}

export interface LockHandlerOptions {
  /** Only for this lock name (several LockerModules in one app); default every lock. */
  lockName?: string;
}

/** Runs when this instance becomes master: start master-only work here. Metadata only. */
export const OnLockAcquired = (options: LockHandlerOptions = {}): MethodDecorator =>
  SetMetadata(LOCK_ACQUIRED_HANDLER, options);

/** Runs when this instance demotes (lock lost, or shutdown): stop master-only work here. */
export const OnLockLost = (options: LockHandlerOptions = {}): MethodDecorator =>
  SetMetadata(LOCK_LOST_HANDLER, options);
