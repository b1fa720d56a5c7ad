import { HoldfastError } from '@holdfast/core';

/** `failIfLocked: true` and another instance holds the lock: bootstrap fails at once. */
export class LockHeldError extends HoldfastError {
  constructor(
    readonly lockName: string,
    readonly holder: string | undefined,
  ) {
    super(
      `Lock '${lockName}' is held by ${holder ? `'${holder}'` : 'another instance'} and failIfLocked is true: ` +
        `this instance will not wait as a standby. Set failIfLocked: false to wait for the lock instead.`,
      'HOLDFAST_LOCK_HELD',
    );
  }
}

/**
 * lockAcquireSleepInterval does not exceed lockKeepAlivePeriod. The lease (and the keep-alive
 * deadline) lasts one lockAcquireSleepInterval, so the lock would lapse between two keep-alives.
 */
export class LockTimingError extends HoldfastError {
  constructor(
    readonly lockAcquireSleepInterval: number,
    readonly lockKeepAlivePeriod: number,
  ) {
    super(
      `Invalid LockerModule timing: lockAcquireSleepInterval (${lockAcquireSleepInterval} ms) must exceed ` +
        `lockKeepAlivePeriod (${lockKeepAlivePeriod} ms). A lease lasts one lockAcquireSleepInterval and is ` +
        `renewed every lockKeepAlivePeriod; with these values it would expire between two keep-alives and a ` +
        `standby could take over while this instance still acts as master. Lower lockKeepAlivePeriod ` +
        `(a third of lockAcquireSleepInterval is a good value) or raise lockAcquireSleepInterval.`,
      'HOLDFAST_LOCK_TIMING',
    );
  }
}

/** A locker needs something the environment does not provide (e.g. an in-memory SQLite database). */
export class LockerConfigurationError extends HoldfastError {
  constructor(message: string) {
    super(message, 'HOLDFAST_LOCKER_CONFIGURATION');
  }
}

/** A custom locker class does not implement the Locker interface. */
export class InvalidLockerError extends HoldfastError {
  constructor(readonly value: unknown) {
    super(
      `The custom locker ${String((value as { name?: string })?.name ?? value)} does not implement Locker: ` +
        `it needs start(signal), stop() and keepAlive() methods. Extend AbstractLocker to get the acquire loop.`,
      'HOLDFAST_INVALID_LOCKER',
    );
  }
}
