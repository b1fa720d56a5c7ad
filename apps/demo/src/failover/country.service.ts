import { Injectable, NotFoundException } from '@nestjs/common';
import { Failover, Referential } from '@holdfast/failover';
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

/** Reference data behind @Failover: served from the store, marked stale, while the upstream is down. */
@Injectable()
export class CountryService {
  constructor(private readonly upstream: CountryUpstream) {}

  @Failover({ name: 'country-by-code', type: Country, expiry: '1h' })
  async findByCode(code: string): Promise<Country> {
    const found = await this.upstream.country(code);
    if (!found) throw new NotFoundException(`unknown country ${code}`);
    return Object.assign(new Country(), found);
  }

  @Failover({ name: 'rate-by-currency', type: Rate, expiry: '10m' })
  async rate(currency: string): Promise<Rate> {
    const perEuro = await this.upstream.rate(currency);
    return Object.assign(new Rate(), { currency: currency.toUpperCase(), perEuro, quotedAt: new Date() });
  }
}
