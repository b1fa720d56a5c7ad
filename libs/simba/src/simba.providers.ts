import type { Provider } from '@nestjs/common';
import { DatabaseResolver } from '@holdfast/core/kit';
import { SimbaExplorer } from './explorer/simba.explorer';
import { SimbaHealthIndicator } from './health/simba.health';
import { SimbaMetrics } from './health/simba.metrics';
import { SimbaLocker } from './locker/simba-locker';
import { MutexContendRegistry } from './mutex/mutex-contend.registry';
import { MutexContendServiceFactory } from './mutex/mutex-contend-service.factory';
import { MutexOwnerRepository } from './mutex/mutex-owner.repository';
import { SimbaConnection } from './mutex/simba-connection';
import { SIMBA_RESOLVED_OPTIONS } from './simba.constants';
import { SIMBA_MODULE_OPTIONS } from './simba.module-definition';
import { resolveSimbaOptions, type SimbaModuleOptions } from './simba.options';

/** Defaults merged and validated in one place for forRoot and forRootAsync. */
export function createResolvedOptionsProvider(): Provider {
  return {
    provide: SIMBA_RESOLVED_OPTIONS,
    useFactory: (options: SimbaModuleOptions) => resolveSimbaOptions(options),
    inject: [SIMBA_MODULE_OPTIONS],
  };
}

export function createSimbaProviders(): Provider[] {
  return [
    createResolvedOptionsProvider(),
    { provide: DatabaseResolver, useClass: DatabaseResolver },
    { provide: SimbaMetrics, useFactory: () => new SimbaMetrics() },
    SimbaConnection,
    MutexContendServiceFactory,
    MutexContendRegistry,
    MutexOwnerRepository,
    SimbaLocker,
    SimbaHealthIndicator,
    SimbaExplorer,
  ];
}

export const SIMBA_EXPORTS = [
  SIMBA_RESOLVED_OPTIONS,
  MutexContendServiceFactory,
  MutexContendRegistry,
  MutexOwnerRepository,
  SimbaLocker,
  SimbaHealthIndicator,
];
