import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { FailoverMetrics } from '@holdfast/failover';
import { CountryUpstream } from './country-upstream.service';
import { CountryService } from './country.service';

@Controller()
export class FailoverDemoController {
  constructor(
    private readonly countries: CountryService,
    private readonly upstream: CountryUpstream,
    private readonly metrics: FailoverMetrics,
  ) {}

  @Get('countries/:code')
  country(@Param('code') code: string) {
    return this.countries.findByCode(code);
  }

  @Get('rates/:currency')
  rate(@Param('currency') currency: string) {
    return this.countries.rate(currency);
  }

  @Get('upstream')
  state() {
    return {
      down: this.upstream.down,
      calls: this.upstream.calls,
      outcomes: this.metrics.outcomes,
      storeErrors: this.metrics.storeErrors,
    };
  }

  /** Body `{ "down": true }` switches the upstream off, `{ "down": false }` on; no body toggles it. */
  @Post('upstream/outage')
  @HttpCode(200)
  outage(@Body() body: { down?: boolean } = {}) {
    this.upstream.down = typeof body?.down === 'boolean' ? body.down : !this.upstream.down;
    return this.state();
  }
}
