import { Logger } from '@nestjs/common';
import type { ModuleRef } from '@nestjs/core';
import type { HoldfastTimers, OutageLog, SqlClient } from '@holdfast/core/kit';
import { InvalidLockerError } from '../errors';
import { DatabaseLocker } from '../lock/database.locker';
import { LeaseDatabaseLocker } from '../lock/lease-database.locker';
import type { Locker, LockerContext } from '../lock/locker.interface';
import { MtimeFileLocker } from '../lock/mtime-file.locker';
import { SharedFileLocker } from '../lock/shared-file.locker';
import type { ResolvedLockerOptions } from '../locker.options';

/** The built-in lockers by type. */
const BUILT_IN = {
  'lease-database': LeaseDatabaseLocker,
  database: DatabaseLocker,
  'shared-file': SharedFileLocker,
} as const;

/** The configured locker: a built-in one, or the app's `useClass` created in the module and checked. */
export async function createLocker(options: ResolvedLockerOptions, moduleRef: ModuleRef): Promise<Locker> {
  const kind = options.locker;
  if (kind.type === 'shared-file' && kind.mode === 'mtime') return new MtimeFileLocker();
  if (kind.type !== 'custom') return new BUILT_IN[kind.type]();
  const locker = await moduleRef.create(kind.useClass);
  const candidate = locker as Partial<Locker>;
  if (
    typeof candidate.start !== 'function' ||
    typeof candidate.stop !== 'function' ||
    typeof candidate.keepAlive !== 'function'
  ) {
    throw new InvalidLockerError(kind.useClass);
  }
  return locker;
}

/** What {@link lockerContext} needs from the service. */
export interface LockerContextSource {
  readonly options: ResolvedLockerOptions;
  /** The module's database (a LockerDatabase), resolved on first use. */
  readonly database: {
    readonly sql: SqlClient;
    readonly setupSql: SqlClient;
    heldSql(lockName: string): SqlClient;
  };
  readonly timers: HoldfastTimers;
  /** Whether the service has not finished its first start yet. */
  readonly firstStart: () => boolean;
  /** The name the locker logs under. */
  readonly loggerName: string;
  /** The lock's one outage log (see LockerContext.lock.outage). */
  readonly outage?: OutageLog;
}

/** The context a locker is configured with: its options, the database (resolved on first use), timers. */
export function lockerContext(source: LockerContextSource): LockerContext {
  const { options } = source;
  let database: ReturnType<LockerContext['database']> | undefined;
  return {
    options,
    lock: {
      name: options.lockName,
      acquireSleepInterval: options.lockAcquireSleepInterval,
      keepAlivePeriod: options.lockKeepAlivePeriod,
      // failIfLocked governs the first start only; after a demotion the instance waits as standby.
      get failIfLocked() {
        return source.firstStart() && options.failIfLocked;
      },
      outage: source.outage,
    },
    holder: {
      id: options.instanceId,
      configured: options.locker.type === 'lease-database' && !!options.locker.leaseHolderId,
    },
    database: () => {
      const db = source.database;
      return (database ??= {
        get dataSource() {
          return db.setupSql.dataSource;
        },
        get sql() {
          return db.sql;
        },
        get setupSql() {
          return db.setupSql;
        },
        heldSql: () => db.heldSql(options.lockName),
      });
    },
    logger: new Logger(source.loggerName),
    timers: source.timers,
  };
}
