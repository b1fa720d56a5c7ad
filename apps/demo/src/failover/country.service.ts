import { Injectable, NotFoundException } from '@nestjs/common';
import { Failover, ListPayloadSplitter, Referential } from '@holdfast/failover';
import { CountryUpstream } from './country-upstream.service';

export class Country extends Referential {
  code!: string;
  name!: string;
  currency!: string;
  capital!: string;
}

export class Rate extends Referential {
  currency!: string;
  perEuro!: number;
  quotedAt!: Date;
}

/** Stores a list of countries as one entry per code, shared with findByCode through the domain. */
export class CountrySplitter extends ListPayloadSplitter<Country> {
  protected idOf(country: Country): string {
    return country.code;
  }
}

/** Reference data behind @Failover: served from the store, marked stale, while the upstream is down. */
@Injectable()
export class CountryService {
  constructor(private readonly upstream: CountryUpstream) {}

  @Failover({ name: 'country-by-code', domain: 'country', type: Country, expiry: '1h' })
  async findByCode(code: string): Promise<Country> {
    const found = await this.upstream.country(code.toUpperCase());
    if (!found) throw new NotFoundException(`unknown country ${code}`);
    return Object.assign(new Country(), found);
  }

  /** Scatter/gather: each country is stored on its own; a missing one comes back as null. */
  @Failover({
    name: 'countries-by-codes',
    domain: 'country',
    type: [Country],
    payloadSplitter: CountrySplitter,
    expiry: '1h',
  })
  async findByCodes(codes: string[]): Promise<Array<Country | null>> {
    const found = await Promise.all(codes.map((code) => this.upstream.country(code.toUpperCase())));
    return found.map((c) => (c ? Object.assign(new Country(), c) : null));
  }

  @Failover({ name: 'rate-by-currency', type: Rate, expiry: '10m' })
  async rate(currency: string): Promise<Rate> {
    const perEuro = await this.upstream.rate(currency);
    return Object.assign(new Rate(), { currency: currency.toUpperCase(), perEuro, quotedAt: new Date() });
  }
}
