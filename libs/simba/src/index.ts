export { SimbaModule } from './simba.module';
export {
  SIMBA_MODULE_OPTIONS,
  SIMBA_OPTIONS_TYPE,
  SIMBA_ASYNC_OPTIONS_TYPE,
} from './simba.module-definition';
export { SIMBA_RESOLVED_OPTIONS } from './simba.constants';
export { resolveSimbaOptions, type SimbaModuleOptions, type ResolvedSimbaOptions } from './simba.options';
export { SIMBA_MUTEX_TABLE } from './table/simba-mutex.table';
export { type MutexContender, AbstractMutexContender, defaultContenderId } from './mutex/mutex-contender';
export { MutexOwner } from './mutex/mutex-owner';
export { MutexState } from './mutex/mutex-state';
export { MutexContendService, ContendServiceStatus, type ContendTiming } from './mutex/mutex-contend.service';
export { MutexContendServiceFactory } from './mutex/mutex-contend-service.factory';
export { MutexContendRegistry } from './mutex/mutex-contend.registry';
export { MutexQueryResolver } from './mutex/mutex-query.resolver';
export { OnMutexAcquired, OnMutexReleased } from './decorators/on-mutex.decorators';
export { LeaderOnly } from './decorators/leader-only.decorator';
export { SimbaLocker, MutexLocker } from './locker/simba-locker';
export { SimbaHealthIndicator } from './health/simba.health';
export * from './errors';
export * from './fencing';
