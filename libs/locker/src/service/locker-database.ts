import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { DatabaseResolver, HoldfastDatabase } from '@holdfast/core/kit';
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
    @Inject(LOCKER_OPTIONS) options: ResolvedLockerOptions,
  ) {
    super(moduleRef, resolver, 'LockerModule', options);
  }
}
