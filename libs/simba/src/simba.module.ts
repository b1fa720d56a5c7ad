import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { SimbaConfigurableModule } from './simba.module-definition';
import { createSimbaProviders, SIMBA_EXPORTS } from './simba.providers';

/**
 * Distributed mutexes and leader election on a `simba_mutex` table:
 * `SimbaModule.forRoot({ ttl: '10s', transition: '6s' })` or `forRootAsync({ useFactory, inject })`.
 */
@Module({
  imports: [DiscoveryModule],
  providers: createSimbaProviders(),
  exports: SIMBA_EXPORTS,
})
export class SimbaModule extends SimbaConfigurableModule {}
