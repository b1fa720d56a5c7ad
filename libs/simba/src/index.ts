export { SimbaModule } from './simba.module';
export type { SimbaModuleOptions, ResolvedSimbaOptions } from './simba.options';
export { InjectSimbaOptions } from './simba.decorators';
export { type MutexContender, AbstractMutexContender, defaultContenderId } from './mutex/mutex-contender';
export { MutexOwner } from './mutex/mutex-owner';
export { MutexState } from './mutex/mutex-state';
export { MutexContendService, ContendServiceStatus, type ContendTiming } from './mutex/mutex-contend.service';
export { MutexContendServiceFactory } from './mutex/mutex-contend-service.factory';
export { MutexContendRegistry } from './mutex/mutex-contend.registry';
export { MutexOwnerRepository, MutexOwnerEntity } from './mutex/mutex-owner.repository';
export { OnMutexAcquired, OnMutexReleased } from './decorators/on-mutex.decorators';
export { LeaderOnly } from './decorators/leader-only.decorator';
export { MutexContenderProvider } from './decorators/mutex-contender-provider.decorator';
export { SimbaLocker, MutexLocker } from './locker/simba-locker';
export { SimbaHealthIndicator } from './health/simba.health';
export * from './errors';
export * from './fencing';
// The status read-model (and the operator's commands) on this lib's tables: for the CLI, the dashboard, tools.
export * from './status';
