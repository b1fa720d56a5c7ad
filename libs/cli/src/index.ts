export { HOLDFAST_MIGRATIONS } from './migrations';
export { HOLDFAST_TABLES } from './tables';
export { runCli, type CliIo } from './cli';
export { dataSourceOptionsFromUrl } from './database-url';
export { CliUsageError, InvalidDatabaseUrlError } from './errors';
export type {
  HoldfastStatus,
  MutexStatus,
  LockStatus,
  InboxStatus,
  FailoverStatus,
} from './status/status-queries';
