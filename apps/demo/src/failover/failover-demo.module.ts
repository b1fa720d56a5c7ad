import { Module } from '@nestjs/common';
import { FailoverModule } from '@holdfast/failover';
import { CountryUpstream } from './country-upstream.service';
import { CountryService } from './country.service';
import { FailoverDemoController } from './failover-demo.controller';

@Module({
  imports: [FailoverModule.forRoot({ store: { type: 'sql' } })],
  controllers: [FailoverDemoController],
  providers: [CountryUpstream, CountryService],
})
export class FailoverDemoModule {}
