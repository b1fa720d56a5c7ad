// The migrations live in the repository's top-level migrations/ folder; the package ships them
// compiled at @holdfast/cli/migrations.
export { HOLDFAST_MIGRATIONS } from '@holdfast/cli/migrations';
export { HOLDFAST_TABLES } from './tables';
export type {
  HoldfastStatus,
  MutexStatus,
  LockStatus,
  InboxStatus,
  FailoverStatus,
} from './status/status-queries';
