import type { Logger } from '@nestjs/common';
import type { HoldfastTimers, OutageLog, SchemaMode, SqlClient } from '@holdfast/core/kit';
import type { DataSource } from 'typeorm';
import type { LockTableNames } from '../store/holdfast-lock.table';

/** What a locker reads of its module's resolved options. */
export interface LockerContextOptions {
  readonly tablePrefix: string;
  readonly schema: SchemaMode;
  /** The lock table's name and column names (`lockTableName`, `lockColumns`); default Holdfast's. */
  readonly lockTable?: LockTableNames;
  /** lease-database: the clock-difference warning threshold in ms (0 = no check). */
  readonly maxAllowableDiffFromDBTime: number;
  /** shared-file in mode 'mtime': staleness threshold in ms. */
  readonly sharedFileStale: number;
  /** The configured locker; `directory`, `mode` and `lockFile` are the shared-file locker's. */
  readonly locker: {
    readonly type: string;
    readonly directory?: string;
    readonly mode?: string;
    readonly lockFile?: string;
  };
}

/**
 * A locker's way to its module's database. Each client is created when first read: a locker
 * reads only what it uses, and Holdfast counts only those connections (ConnectionBudget).
 */
export interface LockerDatabaseAccess {
  /** The application's DataSource. */
  readonly dataSource: DataSource;
  /**
   * The lock's statements while the application runs: on Holdfast's lease lane (one connection
   * that Simba's rounds and the other lease statements share, never the application's pool),
   * each bounded by the lock's statement timeout.
   */
  readonly sql: SqlClient;
  /** Statements run once at startup (the lock row, server checks): on the application's pool (default `sql`). */
  readonly setupSql?: SqlClient;
  /**
   * A client on a coordination lane of the lock's own, for a lock held in an open transaction
   * (the `database` locker): that connection is the lock's alone for as long as the application
   * runs (default `sql`).
   */
  heldSql?(): SqlClient;
}

/** The lock a locker takes: its name, how it is acquired and kept, and its outage log. */
export interface LockerLockSettings {
  readonly name: string;
  /** Milliseconds between acquire attempts (`lockAcquireSleepInterval`). */
  readonly acquireSleepInterval: number;
  /** Milliseconds between keep-alives (`lockKeepAlivePeriod`); 0: none. */
  readonly keepAlivePeriod: number;
  /** One acquire attempt, then LockHeldError (`failIfLocked`; the first start only). */
  readonly failIfLocked: boolean;
  /**
   * The lock's one outage log: the service's keep-alives and the locker's acquire attempts share
   * it, so an outage of the store is one warning when it starts and one when it ends.
   */
  readonly outage?: OutageLog;
}

/** Who this instance is to the lock. */
export interface LockerHolder {
  /** This instance's name (BROKER_NAME, the lock file's owner). */
  readonly id: string;
  /** True when `id` was configured (`leaseHolderId`), false when generated (unique per instance). */
  readonly configured?: boolean;
}

/**
 * What a locker learns about its module before first use. Grouped by job: the module's options,
 * the lock, the holder, the database, and the service's logger and timers.
 */
export interface LockerContext {
  readonly options: LockerContextOptions;
  readonly lock: LockerLockSettings;
  readonly holder: LockerHolder;
  /** The module's database, resolved on first call (see LockerDatabaseAccess). */
  database(): LockerDatabaseAccess;
  readonly logger: Logger;
  /**
   * The service's timers, in the app's SchedulerRegistry: name yours
   * `holdfast:locker:<what>:<lock name>`.
   */
  readonly timers: HoldfastTimers;
}

/**
 * A storage locker, after ActiveMQ's `Locker`: `start` returns once this instance holds the
 * lock, `keepAlive` says whether it still does, `stop` releases it.
 */
export interface Locker {
  /** Called once, before the first `start`. */
  configure?(context: LockerContext): void | Promise<void>;
  /**
   * Resolves when the lock is acquired, retrying every `lock.acquireSleepInterval`. With
   * `lock.failIfLocked` it rejects with LockHeldError after one attempt. Rejects with the signal's
   * reason when aborted.
   */
  start(signal: AbortSignal): Promise<void>;
  /** Releases the lock if held. Safe to call when not held. */
  stop(): Promise<void>;
  /** true: still ours. false: lost. A throw means "unknown" (e.g. the database is unreachable). */
  keepAlive(): Promise<boolean>;
  /**
   * Monotonic time (`monotonicMillis()`) until which the lock is certainly still ours even if
   * keep-alives fail. Without it, a throwing keep-alive demotes at once.
   */
  validUntil?(): number;
  /** Who holds the lock now, as far as the store tells (undefined: free or unknown). */
  holder?(): Promise<string | undefined>;
  /**
   * Registers a callback the locker calls when it learns, between keep-alives, that the lock may
   * be gone (its connection closed): the service then runs a keep-alive at once instead of
   * waiting for the next one.
   */
  onSuspectedLoss?(listener: () => void): void;
  /** Called once at module shutdown after `stop`, to close connections. */
  dispose?(): Promise<void>;
}
