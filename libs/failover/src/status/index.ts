export {
  failoverTable,
  readFailoverStatus,
  type FailoverStatus,
  type FailoverStoreStatus,
  type FailoverTableOptions,
} from './failover-status';
