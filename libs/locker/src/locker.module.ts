import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { LockerHealthIndicator } from './health/locker.health';
import { ConfigurableLockerModule } from './locker.module-definition';
import { LOCKER_OPTIONS } from './locker.tokens';
import { createDatabaseResolverProvider, createResolvedOptionsProvider } from './locker.providers';
import { LockHandlersExplorer } from './explorer/lock-handlers.explorer';
import { LockerDatabase } from './service/locker-database';
import { LockerService } from './service/locker.service';

/**
 * Master/standby for a whole service: `LockerModule.forRoot({ locker: { type: 'lease-database' } })`.
 * See SPEC section 5 and the README for the options.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    createResolvedOptionsProvider(),
    createDatabaseResolverProvider(),
    LockerDatabase,
    LockHandlersExplorer,
    LockerService,
    LockerHealthIndicator,
  ],
  exports: [LOCKER_OPTIONS, LockerService, LockerHealthIndicator],
})
export class LockerModule extends ConfigurableLockerModule {}
