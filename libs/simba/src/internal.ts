// @holdfast/simba/internal: plumbing shared with Holdfast's own packages (@holdfast/cli,
// @holdfast/dashboard), its benchmarks and tests. Not part of the public API: no stability
// promise between versions. Applications use the main entry, '@holdfast/simba'.
export { SIMBA_OPTIONS } from './simba.tokens';
export { MutexQueryResolver } from './store/mutex-query.resolver';
export { resolveSimbaOptions } from './options/simba-options.schema';
export { SIMBA_MUTEX_TABLE } from './store/simba-mutex.table';
export { readMutexStatus, selectMutexStatus, toMutexStatus, type MutexStatus } from './store/mutex-status';
export { TIMELINE_MARKER } from './store/failover-grace';
// Simba's reads of its own table (its repository and the row it returns): the dashboard's and tests'.
export { MutexOwnerRepository, MutexOwnerEntity } from './mutex/mutex-owner.repository';
