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
  ResolvedFailoverOptions,
  ResolvedFailoverModuleOptions,
} from './failover.options';
export {
  Failover,
  FailoverPayload,
  InjectFailoverStore,
  InjectFailoverOptions,
  InjectFailoverExecutor,
} from './failover.decorators';
export type { FailoverOptions } from './decorators/failover-options';
export {
  FAILOVER_KEY_GENERATOR,
  getFailoverStoreToken,
  getFailoverToken,
  getFailoverKeyGeneratorToken,
} from './failover.tokens';
export { FailoverExecutor } from './executor/failover-executor';
export { RecoveredPayloadHandler, type RecoveryContext } from './executor/recovered-payload.handler';
export { FailoverCleanupService } from './cleanup/failover-cleanup.service';
export { FailoverHealthIndicator } from './health/failover.health';
export { FailoverMetrics, type CallOutcome, type FailoverTally } from './metrics/failover.metrics';
export type { KeyGenerator, FailoverKeyContext } from './key/key-generator';
export { DefaultKeyGenerator } from './key/default-key.generator';
export { InjectiveKeyGenerator } from './key/injective-key.generator';
export { Referential } from './payload/referential';
export type { Class, PayloadType, DeclaredPayloadType, JavaNamedPayloadType } from './payload/payload-type';
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
export * from './errors';
// The status read-model (and the operator's commands) on this lib's tables: for the CLI, the dashboard, tools.
export * from './status';
