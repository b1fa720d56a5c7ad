export { FailoverModule } from './failover.module';
export {
  FAILOVER_OPTIONS_TYPE,
  FAILOVER_ASYNC_OPTIONS_TYPE,
  FAILOVER_MODULE_OPTIONS,
} from './failover.module-definition';
export type {
  FailoverModuleOptions,
  AsyncWriteOptions,
  ExecutionOptions,
  MultiTenantOptions,
  EncryptionOptions,
  FailoverStoreOptions,
  MemoryStoreOptions,
  SqlStoreOptions,
  CustomStoreOptions,
} from './options/failover-module.options';
export { Failover } from './decorator/failover.decorator';
export type { FailoverOptions } from './decorator/failover-options';
export { getFailoverStoreToken } from './failover.constants';
export { FailoverExecutor } from './executor/failover-executor';
export { FailoverRegistry, type DiscoveredFailover } from './executor/failover.registry';
export { RecoveredPayloadHandler, type RecoveryContext } from './executor/recovered-payload.handler';
export { FailoverCleanupService } from './cleanup/failover-cleanup.service';
export { FailoverHealthIndicator } from './health/failover.health';
export { FailoverMetrics, type CallOutcome, type FailoverTally } from './health/failover.metrics';
export {
  DefaultKeyGenerator,
  InjectiveKeyGenerator,
  type KeyGenerator,
  type FailoverKeyContext,
} from './key/key-generator';
export { failoverKey } from './key/failover-key';
export { Referential } from './payload/referential';
export { FailoverTypeRegistry, type PayloadClassDeclaration } from './payload/failover-type.registry';
export { FailoverPayload } from './payload/failover-payload.decorator';
export { PayloadCodec } from './payload/payload-codec';
export type { Class, PayloadType } from './payload/payload-type';
export type { FailoverStore, FailoverEntry, StoreManyItem } from './store/failover-store';
export { FailoverWriter } from './executor/failover-writer';
export { FailoverStores } from './tenant/failover-stores';
export { FailoverTenant } from './tenant/failover-tenant';
export { ListPayloadSplitter, type PayloadSplitter, type PayloadSlice } from './scatter/payload-splitter';
export { Aes256GcmCipher, type PayloadCipher } from './payload/payload-cipher';
export {
  EncryptingPayloadColumnResolver,
  PayloadDecryptionError,
} from './store/encrypting-payload-column.resolver';
export { MemoryFailoverStore } from './store/memory-failover.store';
export { DatabaseClock } from './store/database-clock';
export { StoreTimeoutError } from './store/store-guard';
export { SqlFailoverStore, type SqlFailoverStoreConfig } from './store/sql-failover.store';
export { FailoverStoreQueryResolver, type FailoverQueryContext } from './store/failover-store-query.resolver';
export { PayloadColumnResolver } from './store/payload-column.resolver';
export { FAILOVER_STORE_TABLE } from './store/failover-store.table';
export { DatabaseResolver } from '@holdfast/core';
export * from './errors';
