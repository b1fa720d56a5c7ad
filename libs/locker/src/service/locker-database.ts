import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import {
  DatabaseResolver,
  HoldfastDatabase,
  type SqlClient,
  type SqlClientOptions,
} from '@holdfast/core/kit';
import { LOCKER_OPTIONS } from '../locker.tokens';
import type { ResolvedLockerOptions } from '../locker.options';
import { statementTimeoutFor } from '../lock/lock-timing';

/**
 * The locker's way to its database (core's HoldfastDatabase, as simba's, the inbox's and the
 * failover store's): the default or named DataSource, resolved on first use, which a database
 * locker's `configure` is. The lease-database locker's statements go to the lease lane, each
 * bounded by the lock's statement timeout; the `database` locker's held transaction to a lane of
 * its own (`heldSql`); startup statements to the application's pool (`setupSql`).
 */
@Injectable()
export class LockerDatabase extends HoldfastDatabase {
  constructor(
    moduleRef: ModuleRef,
    resolver: DatabaseResolver,
    @Inject(LOCKER_OPTIONS) private readonly options: ResolvedLockerOptions,
  ) {
    super(moduleRef, resolver, 'LockerModule', options);
  }

  get setupSql(): SqlClient {
    return this.applicationSql;
  }

  /** The `database` locker's connection: a lane of the lock's own (see ConnectionBudget). */
  heldSql(lockName: string): SqlClient {
    return this.laneSql(
      {
        // One per locker: two lockers of one lock in one process (a master and its standby) hold a connection each.
        key: `held:${this.options.tablePrefix}:${lockName}:${this.options.instanceId}`,
        what: `locker '${lockName}' (the transaction that holds it)`,
      },
      {},
    );
  }

  /**
   * Every wait of the module's clients within the lock's bound: the lease statements, and what
   * runs at setup (the lock row's preparation, the clock read). A connection gone silent for good
   * is destroyed and replaced, not waited on for ever (#43).
   */
  protected override clientOptions(): SqlClientOptions {
    return {
      statementTimeout: statementTimeoutFor(
        this.options.lockAcquireSleepInterval,
        this.options.lockKeepAlivePeriod,
      ),
    };
  }
}
