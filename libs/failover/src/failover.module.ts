import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { DatabaseResolver } from '@holdfast/core/kit';
import { FailoverCleanupService } from './cleanup/failover-cleanup.service';
import { FailoverAnswers } from './executor/failover-answers';
import { FailoverBypass } from './executor/failover-bypass';
import { FailoverCallTracing } from './executor/failover-call-tracing';
import { FailoverCalls } from './executor/failover-calls';
import { FailoverExecutor } from './executor/failover-executor';
import { FailoverFlights } from './executor/failover-flights';
import { FailoverFreshness } from './executor/failover-freshness';
import { FailoverKeeper } from './executor/failover-keeper';
import { FailoverLookup } from './executor/failover-lookup';
import { FailoverParts, FailoverStoreBreaker } from './executor/failover-parts';
import { FailoverRecovery } from './executor/failover-recovery';
import { FailoverRuntimes } from './executor/failover-runtimes';
import { FailoverExplorer } from './explorer/failover.explorer';
import { FailoverDeclarations, FailoverSummary } from './explorer/failover-summary';
import { FailoverRegistry } from './explorer/failover.registry';
import { FailoverWriter } from './executor/failover-writer';
import { FailoverConfigurableModule } from './failover.module-definition';
import { FailoverOverrides } from './explorer/failover-overrides';
import { keyGeneratorProvider, resolvedOptionsProvider, storeProvider } from './failover.providers';
import { FailoverHealthIndicator } from './health/failover.health';
import { FailoverMetrics } from './metrics/failover.metrics';
import { FailoverTypeRegistry } from './payload/failover-type.registry';
import { PayloadCodec } from './payload/payload-codec';
import { FailoverStoreQueryResolver } from './store/failover-store-query.resolver';
import { FailoverStores } from './tenant/failover-stores';
import { PayloadColumnResolver } from './store/payload-column.resolver';

/**
 * `FailoverModule.forRoot({ store: { type: 'sql' } })` (or `forRootAsync`) once in the app;
 * then `@Failover({ name })` on any provider method. A second store beside it:
 * `FailoverModule.forRoot({ name: 'reports', … })` and `@Failover({ name, store: 'reports' })`.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    resolvedOptionsProvider,
    keyGeneratorProvider,
    FailoverOverrides,
    storeProvider,
    DatabaseResolver,
    FailoverStoreQueryResolver,
    PayloadColumnResolver,
    FailoverTypeRegistry,
    PayloadCodec,
    FailoverMetrics,
    FailoverWriter,
    FailoverStores,
    // The executor and its parts, one provider each (see executor/failover-answers.ts).
    FailoverRuntimes,
    FailoverStoreBreaker,
    FailoverParts,
    FailoverKeeper,
    FailoverLookup,
    FailoverRecovery,
    FailoverFlights,
    FailoverFreshness,
    FailoverBypass,
    FailoverAnswers,
    FailoverCalls,
    FailoverCallTracing,
    FailoverExecutor,
    FailoverRegistry,
    FailoverDeclarations,
    FailoverSummary,
    FailoverExplorer,
    FailoverCleanupService,
    FailoverHealthIndicator,
  ],
  // Exports depend on the module's name (failover.module-definition.ts): the classes for the
  // default module, getFailoverToken(Class, name) for a named one.
})
export class FailoverModule extends FailoverConfigurableModule {}
