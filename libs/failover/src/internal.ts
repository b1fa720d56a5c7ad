// @holdfast/failover/internal: plumbing shared with Holdfast's own packages (@holdfast/cli,
// @holdfast/dashboard), its benchmarks and tests. Not part of the public API: no stability
// promise between versions. Applications use the main entry, '@holdfast/failover'.
export { FAILOVER_MODULE_OPTIONS } from './failover.module-definition';
export { DEFAULT_FAILOVER_STORE } from './failover.constants';
export { FAILOVER_RESOLVED_OPTIONS, FAILOVER_STORE_NAME, getFailoverOptionsToken } from './failover.tokens';
/** Core's DatabaseResolver, the default of `store.databaseResolver` (import it from '@holdfast/core/kit'). */
export { DatabaseResolver } from '@holdfast/core/kit';
export { FailoverRegistry, type DiscoveredFailover } from './explorer/failover.registry';
export { FailoverWriter } from './executor/failover-writer';
export { FailoverStores } from './tenant/failover-stores';
export { PayloadCodec } from './payload/payload-codec';
export { FailoverTypeRegistry, type PayloadClassDeclaration } from './payload/failover-type.registry';
export { failoverKey } from './key/failover-key';
export { NOT_NOW } from './store/failover-store';
export { MemoryFailoverStore } from './store/memory-failover.store';
export { SqlFailoverStore, type SqlFailoverStoreConfig } from './store/sql-failover.store';
export { DatabaseClock } from './store/database-clock';
// The built-in cipher and the column resolver that `store.encryption` wraps around the payload column.
export { Aes256GcmCipher } from './payload/payload-cipher';
export { EncryptingPayloadColumnResolver } from './store/encrypting-payload-column.resolver';
export { cleanupBatchRows } from './store/failover-sql.dialect';
export { FAILOVER_STORE_TABLE } from './store/failover-store.table';
export { selectFailoverStatus, toFailoverStatus, type FailoverStatus } from './store/failover-status';
// The executor's parts, each a provider of FailoverModule (tests replace them with overrideProvider).
export { FailoverParts, FailoverStoreBreaker } from './executor/failover-parts';
export { FailoverAnswers } from './executor/failover-answers';
export { FailoverRuntimes } from './executor/failover-runtimes';
export { FailoverKeeper } from './executor/failover-keeper';
export { FailoverLookup } from './executor/failover-lookup';
export { FailoverRecovery } from './executor/failover-recovery';
export { FailoverFreshness } from './executor/failover-freshness';
export { FailoverFlights } from './executor/failover-flights';
export { FailoverBypass } from './executor/failover-bypass';
export { FailoverCalls } from './executor/failover-calls';
export { FailoverCallTracing } from './executor/failover-call-tracing';
