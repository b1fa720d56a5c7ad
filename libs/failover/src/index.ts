export { FailoverModule } from './failover.module';
export type { FailoverModuleExtras } from './failover.module-definition';
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
  ResolvedFailoverModuleOptions,
} from './options/failover-module.options';
export { Failover } from './decorator/failover.decorator';
export type { FailoverOptions } from './decorator/failover-options';
export { getFailoverStoreToken, getFailoverToken, getFailoverKeyGeneratorToken } from './failover.tokens';
export { FAILOVER_KEY_GENERATOR } from './failover.constants';
export { InjectFailoverStore, InjectFailoverOptions, InjectFailoverExecutor } from './failover.decorators';
export { FailoverExecutor } from './executor/failover-executor';
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
export { Referential } from './payload/referential';
export { FailoverPayload } from './payload/failover-payload.decorator';
export type { Class, PayloadType } from './payload/payload-type';
export type { FailoverStore, FailoverEntry, StoreManyItem } from './store/failover-store';
export { FailoverTenant } from './tenant/failover-tenant';
export { ListPayloadSplitter, type PayloadSplitter, type PayloadSlice } from './scatter/payload-splitter';
export { Aes256GcmCipher, type PayloadCipher } from './payload/payload-cipher';
export {
  EncryptingPayloadColumnResolver,
  PayloadDecryptionError,
} from './store/encrypting-payload-column.resolver';
export { StoreTimeoutError } from './store/store-guard';
export {
  FailoverStoreQueryResolver,
  type FailoverQueryContext,
  type FailoverRowValues,
  type FailoverLeaseValues,
} from './store/failover-store-query.resolver';
export { PayloadColumnResolver } from './store/payload-column.resolver';
export { DatabaseResolver } from '@holdfast/core/kit';
export * from './errors';
