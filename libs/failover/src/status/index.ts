export {
  failoverTable,
  readFailoverStatus,
  type FailoverStatus,
  type FailoverStoreStatus,
  type FailoverTableOptions,
} from './failover-status';
export { FAILOVER_STATUS_TOKENS, FAILOVER_TABLES } from './failover-module-parts';
