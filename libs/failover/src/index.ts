// @holdfast/failover: @Failover() serves the last good value of an upstream call, marked stale,
// when the upstream fails. Each group below says what its exports are for.

// The module: import it once (or once per named store) in the application.
export { FailoverModule } from './failover.module';
export type { FailoverModuleExtras } from './failover.module-definition';

// The module's options, as the application writes them and as the module resolved them.
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

// Declaring failovers and payload classes, and injecting a (named) module's services.
export {
  Failover,
  FailoverPayload,
  InjectFailoverStore,
  InjectFailoverOptions,
  InjectFailoverExecutor,
} from './failover.decorators';
export type { FailoverOptions } from './decorators/failover-options';

// DI tokens: the key generator to replace, and the tokens of a named module's services.
export {
  FAILOVER_KEY_GENERATOR,
  getFailoverStoreToken,
  getFailoverToken,
  getFailoverKeyGeneratorToken,
} from './failover.tokens';

// Operations: flush and count (the executor), the cleanup, health and metrics.
export { FailoverExecutor } from './executor/failover-executor';
export { FailoverCleanupService } from './cleanup/failover-cleanup.service';
export { FailoverHealthIndicator } from './health/failover.health';
export { FailoverMetrics, type CallOutcome, type FailoverTally } from './metrics/failover.metrics';
// The attribute names of the span each @Failover call records (with an OpenTelemetry SDK).
export { FAILOVER_SPAN_ATTRIBUTES } from './tracing/failover-tracer';

// Extension points: what a call answers when nothing is stored, keys, payload slices.
export { RecoveredPayloadHandler, type RecoveryContext } from './executor/recovered-payload.handler';
export type { KeyGenerator, FailoverKeyContext } from './key/key-generator';
export { DefaultKeyGenerator } from './key/default-key.generator';
export { InjectiveKeyGenerator } from './key/injective-key.generator';
export { ListPayloadSplitter, type PayloadSplitter, type PayloadSlice } from './scatter/payload-splitter';

// Payloads: the base class that carries staleness, and the payload type declarations.
export { Referential } from './payload/referential';
export type { Class, PayloadType, DeclaredPayloadType, JavaNamedPayloadType } from './payload/payload-type';

// Stores: the contract of a custom store, tenants, a cipher of your own (`encryption.cipher`;
// 'aes-256-gcm' is built in), and the SQL store's replaceable parts.
export type { FailoverStore, FailoverEntry, StoreManyItem } from './store/failover-store';
export { FailoverTenant } from './tenant/failover-tenant';
export type { PayloadCipher } from './payload/payload-cipher';
export {
  FailoverStoreQueryResolver,
  type FailoverQueryContext,
  type FailoverRowValues,
  type FailoverLeaseValues,
} from './store/failover-store-query.resolver';
export { PayloadColumnResolver } from './store/payload-column.resolver';

// Errors, each a HoldfastError with a code (the README's tables).
export {
  FailoverError,
  FailoverConfigurationError,
  FailoverStoreException,
  PayloadClassNotAllowedError,
  MalformedPayloadError,
  FailoverTenantError,
  PayloadSplitterError,
  FailoverKeyError,
  UnknownPayloadClassError,
  UnknownFailoverStoreError,
  DuplicateFailoverStoreError,
  StoreTimeoutError,
  StoreSkippedError,
  PayloadDecryptionError,
} from './errors';

// The status read-model (and the operator's commands) on this lib's tables: for the CLI, the dashboard, tools.
export * from './status';
