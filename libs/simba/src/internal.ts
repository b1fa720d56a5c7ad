// @holdfast/simba/internal: plumbing shared with Holdfast's own packages (@holdfast/cli,
// @holdfast/dashboard), its benchmarks and tests. Not part of the public API: no stability
// promise between versions. Applications use the main entry, '@holdfast/simba'.
export { SIMBA_MODULE_OPTIONS } from './simba.module-definition';
export { SIMBA_RESOLVED_OPTIONS } from './simba.constants';
export { resolveSimbaOptions } from './simba.options';
export { SIMBA_MUTEX_TABLE } from './table/simba-mutex.table';
export { readMutexStatus, selectMutexStatus, toMutexStatus, type MutexStatus } from './table/mutex-status';
export { TIMELINE_MARKER } from './mutex/failover-grace';
