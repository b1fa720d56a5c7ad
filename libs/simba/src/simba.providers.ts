import type { Provider } from '@nestjs/common';
import { DatabaseResolver } from '@holdfast/core/kit';
import { SimbaExplorer } from './explorer/simba.explorer';
import { SimbaOrchestrator } from './explorer/simba.orchestrator';
import { SimbaHealthIndicator } from './health/simba.health';
import { SimbaMetrics } from './metrics/simba.metrics';
import { SimbaLocker } from './locker/simba-locker';
import { MutexContendRegistry } from './mutex/mutex-contend.registry';
import { MutexContendServiceFactory } from './mutex/mutex-contend-service.factory';
import { MutexOwnerRepository } from './mutex/mutex-owner.repository';
import { SimbaConnection } from './mutex/simba-connection';
import { SIMBA_MODULE_OPTIONS, SIMBA_OPTIONS } from './simba.tokens';
import { resolveSimbaOptions } from './options/simba-options.schema';
import type { SimbaModuleOptions } from './simba.options';

/** Defaults merged and validated in one place for forRoot and forRootAsync. */
export function createResolvedOptionsProvider(): Provider {
  return {
    provide: SIMBA_OPTIONS,
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
    SimbaOrchestrator,
    SimbaExplorer,
  ];
}

export const SIMBA_EXPORTS = [
  SIMBA_OPTIONS,
  MutexContendServiceFactory,
  MutexContendRegistry,
  MutexOwnerRepository,
  SimbaLocker,
  SimbaHealthIndicator,
];
