// @holdfast/simba/internal: plumbing shared with Holdfast's own packages (@holdfast/cli,
// @holdfast/dashboard), its benchmarks and tests. Not part of the public API: no stability
// promise between versions. Applications use the main entry, '@holdfast/simba'.
export { SIMBA_OPTIONS } from './simba.tokens';
export { MutexQueryResolver } from './store/mutex-query.resolver';
export { resolveSimbaOptions } from './options/simba-options.schema';
export { readMutexStatus, selectMutexStatus, toMutexStatus, type MutexStatus } from './store/mutex-status';
export { TIMELINE_MARKER } from './store/failover-grace';
/** The entity property fenced() uses when `fenceProperty` is not given ('fence'). */
export { DEFAULT_FENCE_PROPERTY } from './fencing';
// Simba's reads of its own table (its repository and the row it returns): the dashboard's and tests'.
export { MutexOwnerRepository, MutexOwnerEntity } from './mutex/mutex-owner.repository';
