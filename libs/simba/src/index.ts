// @holdfast/simba: mutexes shared by an application's instances on one table, with fencing
// tokens (Simba's model). What each group is for:

// The module, its options, and the decorator that injects them.
export { SimbaModule } from './simba.module';
export type { SimbaModuleOptions, ResolvedSimbaOptions } from './simba.options';
export { InjectSimbaOptions } from './simba.decorators';
// A contender of your own: what it implements, the base class to extend, the default id.
export { type MutexContender, AbstractMutexContender, defaultContenderId } from './mutex/mutex-contender';
// What a contender is told: the owner read from the table, and its state in a mutex.
export { MutexOwner } from './mutex/mutex-owner';
export { MutexState } from './mutex/mutex-state';
// Contending by hand: a mutex's contend service (made by the factory, so a type here) and its
// status, the factory that starts one, and the registry that answers "does this instance own
// mutex m?" for every mutex the application contends for (public on purpose: README).
export {
  type MutexContendService,
  ContendServiceStatus,
  type ContendTiming,
} from './mutex/mutex-contend.service';
export { MutexContendServiceFactory } from './mutex/mutex-contend-service.factory';
export { MutexContendRegistry } from './mutex/mutex-contend.registry';
// Contending by decorator: handlers of a mutex's acquisition and release, leader-only methods,
// and a provider that is a contender itself.
export { OnMutexAcquired, OnMutexReleased } from './decorators/on-mutex.decorators';
export { LeaderOnly } from './decorators/leader-only.decorator';
export { MutexContenderProvider } from './decorators/mutex-contender-provider.decorator';
// A mutex as a lock held for a piece of work, with its fencing token (SimbaLocker.locker(m) gives
// the MutexLocker, so a type here).
export { SimbaLocker, type MutexLocker } from './locker/simba-locker';
// Readiness for @nestjs/terminus: whether Simba's table answers.
export { SimbaHealthIndicator } from './health/simba.health';
// The errors a caller can meet (README, "Errors"): each a HoldfastError with a code.
export * from './errors';
// Fenced writes: a repository whose writes carry the owner's fencing token (and its errors, above).
export {
  fenced,
  FencedRepository,
  FenceColumn,
  type FencedOptions,
  type FencedUpdateResult,
} from './fencing';
// The status read-model (and the operator's commands) on this lib's tables: for the CLI, the dashboard, tools.
export * from './status';
