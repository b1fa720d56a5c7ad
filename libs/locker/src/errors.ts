import { HoldfastError } from '@holdfast/core/kit';

/** `failIfLocked: true` and another instance holds the lock: bootstrap fails at once. */
export class LockHeldError extends HoldfastError {
  constructor(
    readonly lockName: string,
    readonly holder: string | undefined,
  ) {
    super(
      `Lock '${lockName}' is held by ${holder ? `'${holder}'` : 'another instance'} and failIfLocked is true: ` +
        `this instance will not wait as a standby. Set failIfLocked: false to wait for the lock instead.`,
      'HOLDFAST_LOCKER_LOCK_HELD',
    );
  }
}

/**
 * lease-database only: lockAcquireSleepInterval does not exceed lockKeepAlivePeriod, or the
 * keep-alive is off (0). The lease lasts one lockAcquireSleepInterval, so it would lapse between
 * two keep-alives (or after the first interval).
 */
export class LockTimingError extends HoldfastError {
  constructor(
    readonly lockAcquireSleepInterval: number,
    readonly lockKeepAlivePeriod: number,
  ) {
    super(
      lockKeepAlivePeriod === 0
        ? `Invalid LockerModule timing for the lease-database locker: lockKeepAlivePeriod is 0 (no keep-alive), ` +
            `but a lease lasts one lockAcquireSleepInterval (${lockAcquireSleepInterval} ms) and must be renewed ` +
            `before it ends, or a standby takes over while this instance still acts as master. Set ` +
            `lockKeepAlivePeriod below lockAcquireSleepInterval (a third of it is a good value).`
        : `Invalid LockerModule timing for the lease-database locker: lockAcquireSleepInterval ` +
            `(${lockAcquireSleepInterval} ms) must exceed lockKeepAlivePeriod (${lockKeepAlivePeriod} ms). A lease ` +
            `lasts one lockAcquireSleepInterval and is renewed every lockKeepAlivePeriod; with these values it ` +
            `would expire between two keep-alives and a standby could take over while this instance still acts ` +
            `as master. Lower lockKeepAlivePeriod (a third of lockAcquireSleepInterval is a good value) or raise ` +
            `lockAcquireSleepInterval.`,
      'HOLDFAST_LOCKER_LOCK_TIMING',
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
      'HOLDFAST_LOCKER_INVALID_LOCKER',
    );
  }
}

/** @ScheduledLock() options that cannot work, or a decorated method used outside Nest. */
export class ScheduledLockConfigurationError extends HoldfastError {
  constructor(message: string) {
    super(message, 'HOLDFAST_LOCKER_SCHEDULED_LOCK_CONFIGURATION');
  }
}

/**
 * The `database` locker on a Galera cluster (MariaDB Galera, Percona XtraDB Cluster): its lock is
 * a row lock held by an open transaction (`SELECT … FOR UPDATE`), and Galera does not replicate
 * row locks (only committed write sets), so an instance on another node would get the same lock
 * at once and two instances would be master together. The locker refuses to start instead.
 */
export class GaleraRowLockError extends HoldfastError {
  constructor(
    readonly lockName: string,
    readonly clusterSize: number | undefined,
  ) {
    super(
      `Lock '${lockName}': the 'database' locker cannot run on a Galera cluster (this server has wsrep_on=ON` +
        `${clusterSize !== undefined ? `, wsrep_cluster_size=${clusterSize}` : ''}). Its lock is a row lock held ` +
        `by an open transaction (SELECT … FOR UPDATE), and Galera does not replicate row locks: an instance ` +
        `connected to another node would get the same lock at once, and two instances would be master ` +
        `together. Use locker: { type: 'lease-database' } on Galera: its lease is a committed row, which ` +
        `Galera replicates and certifies across the nodes.`,
      'HOLDFAST_LOCKER_NOT_ON_GALERA',
    );
  }
}

/**
 * The shared-file locker's mode 'os' cannot take its OS file lock here: the native package that
 * makes the lock did not load, the file system refuses the lock, or its locks would not reach other
 * hosts. Startup stops: Holdfast never falls back to another kind of lock on its own, since a lock
 * ActiveMQ brokers do not see would let a broker and a node be master together.
 */
export class FileLockUnavailableError extends HoldfastError {
  constructor(
    readonly lockName: string,
    readonly path: string,
    readonly reason: string,
    advice: string,
  ) {
    super(
      `Lock '${lockName}': the shared-file locker in mode 'os' (an OS file lock on ${path}, the lock ` +
        `ActiveMQ's SharedFileLocker takes) cannot work here: ${reason}. ${advice}`,
      'HOLDFAST_LOCKER_FILE_LOCK_UNAVAILABLE',
    );
  }
}

/**
 * A @ScheduledLock() job ran before ScheduledLockModule finished its startup (onModuleInit: the
 * lock table checked): the run is skipped as when the lock table is unreachable.
 */
export class ScheduledLockNotReadyError extends HoldfastError {
  constructor() {
    super(
      'ScheduledLockModule is not initialized yet (a job ran before onModuleInit): start the job from ' +
        'onApplicationBootstrap or later, or let @nestjs/schedule start it.',
      'HOLDFAST_LOCKER_SCHEDULED_LOCK_NOT_READY',
    );
  }
}

/** A lock statement or a wait for a pooled connection took longer than its bound. */
export class LockStatementTimeoutError extends HoldfastError {
  constructor(
    readonly what: string,
    readonly timeoutMs: number,
  ) {
    super(
      `${what} took longer than ${timeoutMs} ms; the lock connection was destroyed and the next attempt opens a new one`,
      'HOLDFAST_LOCKER_STATEMENT_TIMEOUT',
    );
  }
}

/** The locker was stopped while it waited for the lock (ends the wait; not thrown to the application). */
export class LockerStoppedError extends HoldfastError {
  constructor() {
    super('The locker was stopped while waiting for the lock', 'HOLDFAST_LOCKER_STOPPED');
  }
}
