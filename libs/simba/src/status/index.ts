export {
  readSimbaStatus,
  releaseMutex,
  simbaTable,
  type MutexReleaseOutcome,
  type MutexStatus,
  type SimbaStatus,
  type SimbaTableOptions,
} from './simba-status';
