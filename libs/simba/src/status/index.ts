export {
  readSimbaStatus,
  releaseMutex,
  simbaTable,
  type MutexReleaseOutcome,
  type MutexStatus,
  type SimbaStatus,
  type SimbaTableOptions,
} from './simba-status';
export { SIMBA_STATUS_TOKENS, SIMBA_TABLES } from './simba-module-parts';
