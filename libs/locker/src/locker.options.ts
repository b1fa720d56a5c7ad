import type { Type } from '@nestjs/common';
import type {
  DataSourceOption,
  Dialect,
  Duration,
  HoldfastDatabaseOptions,
  SchemaMode,
} from '@holdfast/core/kit';
import type { Locker } from './lock/locker.interface';
import type { LockTableNames } from './store/holdfast-lock.table';

export const LOCKER_TYPES = ['lease-database', 'database', 'shared-file', 'custom'] as const;
export type LockerType = (typeof LOCKER_TYPES)[number];
export const STARTUP_MODES = ['block', 'background'] as const;
export type StartupMode = (typeof STARTUP_MODES)[number];

/** ActiveMQ's LeaseDatabaseLocker: a lease row renewed by keep-alive, no long transaction. */
export interface LeaseDatabaseLockerOptions {
  type: 'lease-database';
  /** Name written to BROKER_NAME; default a unique id per instance (host:pid:uuid). */
  leaseHolderId?: string;
  /**
   * When > 0, the gap between this server's clock and the database clock is measured at start
   * and a gap larger than this is logged. Leases use the database clock either way.
   */
  maxAllowableDiffFromDBTime?: Duration;
}

/** ActiveMQ's DefaultDatabaseLocker: a transaction holds SELECT ... FOR UPDATE while master. */
export interface DatabaseLockerOptions {
  type: 'database';
}

/** The kinds of lock the shared-file locker can take. */
export const SHARED_FILE_MODES = ['os', 'mtime'] as const;
export type SharedFileMode = (typeof SHARED_FILE_MODES)[number];

/** ActiveMQ's SharedFileLocker: an exclusive lock on a file in a directory every instance shares. */
export interface SharedFileLockerOptions {
  type: 'shared-file';
  directory: string;
  /**
   * 'os' (default): an OS advisory lock (POSIX fcntl, as Java's FileChannel.lock on Linux) on
   * `<directory>/<lockFile>`, the lock ActiveMQ brokers take; needs the native package os-lock.
   * 'mtime': a lock directory whose mtime the holder refreshes, for file systems without working
   * locks; ActiveMQ does not see it, and a crashed holder's lock is taken only after `stale`.
   */
  mode?: SharedFileMode;
  /** mode 'os': the lock file's name in `directory` (default 'lock', ActiveMQ's). */
  lockFile?: string;
  /** mode 'mtime': a lock not refreshed for this long is stale and may be taken (min 2 s; default 10 s). */
  stale?: Duration;
}

export interface CustomLockerOptions {
  type: 'custom';
  /** Instantiated through the module's injector, so it may inject providers. */
  useClass: Type<Locker>;
}

export type LockerKindOptions =
  LeaseDatabaseLockerOptions | DatabaseLockerOptions | SharedFileLockerOptions | CustomLockerOptions;

export interface LockerModuleOptions {
  /** The TypeORM DataSource, or the name of a @nestjs/typeorm one (default: the default one). */
  dataSource?: DataSourceOption;
  tablePrefix?: string;
  /** Overrides dialect detection. */
  dialect?: Dialect;
  /** What to do with HOLDFAST_LOCK at startup (default 'check'). */
  schema?: SchemaMode;
  locker: LockerKindOptions;
  /** One row / lock file per name (default 'default'; on ActiveMQ's `ACTIVEMQ_LOCK`, its row '1'). */
  lockName?: string;
  /**
   * The lock table, without `tablePrefix` (default 'HOLDFAST_LOCK'), as ActiveMQ's
   * `statements.lockTableName`: e.g. 'ACTIVEMQ_LOCK' to lock on an existing ActiveMQ table.
   */
  lockTableName?: string;
  /**
   * The lock table's column names, when they are not Holdfast's (`ID`, `TIME`, `BROKER_NAME`,
   * which are also ActiveMQ's). Holdfast builds its statements on these names; it takes no SQL
   * text (see the README: ActiveMQ's statement overrides).
   */
  lockColumns?: { id?: string; time?: string; brokerName?: string };
  /** How often a standby retries, and the length of a lease (default 10 s). */
  lockAcquireSleepInterval?: Duration;
  /** A standby's bootstrap fails at once with LockHeldError instead of waiting (default false). */
  failIfLocked?: boolean;
  /**
   * How often the master checks (and, for the lease, renews) its lock; 0 = no keep-alive
   * (`database` and `shared-file` only). Defaults per locker, as ActiveMQ documents them:
   * `database` 30 s, `shared-file` 0, `lease-database` and `custom` a third of lockAcquireSleepInterval.
   */
  lockKeepAlivePeriod?: Duration;
  /** false: no locking at all, this instance is master at once (default true). */
  useLock?: boolean;
  /** 'block': bootstrap waits until this instance is master (default); 'background': starts as standby. */
  startup?: StartupMode;
}

/** Options after defaults, durations in ms, and validation: what the module runs on. */
export interface ResolvedLockerOptions extends HoldfastDatabaseOptions {
  locker: LockerKindOptions;
  lockName: string;
  /** The lock table's name (without prefix) and column names. */
  lockTable: LockTableNames;
  lockAcquireSleepInterval: number;
  failIfLocked: boolean;
  /** 0: no keep-alive. */
  lockKeepAlivePeriod: number;
  useLock: boolean;
  startup: StartupMode;
  /** This instance's name in BROKER_NAME / the lock file. */
  instanceId: string;
  /** lease-database: the warning threshold in ms (0 = no check). */
  maxAllowableDiffFromDBTime: number;
  /** shared-file: staleness threshold in ms. */
  sharedFileStale: number;
}

export interface ScheduledLockModuleOptions {
  /** The TypeORM DataSource, or the name of a @nestjs/typeorm one (default: the default one). */
  dataSource?: DataSourceOption;
  tablePrefix?: string;
  dialect?: Dialect;
  /** What to do with HOLDFAST_LOCK at startup (default 'check'). */
  schema?: SchemaMode;
  /**
   * A bound on each wait of a tick's lock statements: for a pooled connection, and for each
   * answer. Past it the tick is skipped (one warning per outage) and its connection destroyed,
   * not reused, so a connection that went silent for good (a firewall that lost its state) costs
   * one bound, and the next ticks run on new connections. Default '5s'; 0 turns the bound off.
   */
  statementTimeout?: Duration;
}

export interface ResolvedScheduledLockModuleOptions {
  dataSource?: DataSourceOption;
  tablePrefix: string;
  dialect?: Dialect;
  schema: SchemaMode;
  /** Milliseconds (0: no bound). */
  statementTimeout: number;
}
