import { Module, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { FailoverModule } from '@holdfast/failover';
import { CountryUpstream } from './country-upstream.service';
import { CountryService } from './country.service';
import { FailoverDemoController } from './failover-demo.controller';
import { TenantMiddleware } from './tenant.middleware';

/**
 * Tenants 'acme' and 'globex' (header X-Tenant) keep their entries in acme_FAILOVER_STORE and
 * globex_FAILOVER_STORE; requests without the header, or with another tenant, use FAILOVER_STORE.
 */
@Module({
  imports: [
    FailoverModule.forRoot({
      store: { type: 'sql', schema: 'create' },
      multiTenant: {
        tenants: { acme: { tablePrefix: 'acme_' }, globex: { tablePrefix: 'globex_' } },
        defaultTenant: 'shared',
      },
    }),
  ],
  controllers: [FailoverDemoController],
  providers: [CountryUpstream, CountryService, TenantMiddleware],
})
export class FailoverDemoModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(TenantMiddleware).forRoutes(FailoverDemoController);
  }
}
