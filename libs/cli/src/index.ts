export { HOLDFAST_MIGRATIONS } from './migrations';
export { HOLDFAST_TABLES } from './tables';
export type {
  HoldfastStatus,
  MutexStatus,
  LockStatus,
  InboxStatus,
  FailoverStatus,
} from './status/status-queries';
