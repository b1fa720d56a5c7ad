import { BadRequestException, Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
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

  /** `GET /countries?codes=FR,DE,IT`: one entry per country in the store (scatter/gather). */
  @Get('countries')
  list(@Query('codes') codes?: string) {
    const list = (codes ?? '')
      .split(',')
      .map((c) => c.trim().toUpperCase())
      .filter(Boolean);
    if (!list.length || list.some((c) => !/^[A-Z]{2}$/.test(c))) {
      throw new BadRequestException(
        'codes must be a comma list of two-letter country codes, e.g. ?codes=FR,DE,IT',
      );
    }
    return this.countries.findByCodes(list);
  }

  @Get('countries/:code')
  country(@Param('code') code: string) {
    // Normalised before the call: the failover key is made from the arguments as passed.
    return this.countries.findByCode(code.toUpperCase());
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
      rowsWritten: this.metrics.rowsWritten,
      missingSlices: this.metrics.missingSlices,
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
