import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { DatabaseResolver, HoldfastDatabase, type SqlClientOptions } from '@holdfast/core/kit';
import { statementTimeoutFor } from '../lock/lock-timing';
import { LOCKER_OPTIONS } from '../locker.tokens';
import type { ResolvedLockerOptions } from '../locker.options';

/**
 * The locker's way to its database (core's HoldfastDatabase, as simba's, the inbox's and the
 * failover store's): the default or named DataSource and the SqlClient on it, resolved on first
 * use, which a database locker's `configure` is.
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

  /**
   * The lock's own statements run on its reserved connection, each bounded (LockConnection);
   * what runs on the module's client (the lock row's preparation, the clock read) gets the same
   * bound (#43): a connection gone silent for good is destroyed, not waited on for ever.
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
