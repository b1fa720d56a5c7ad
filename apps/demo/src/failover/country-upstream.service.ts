import { Injectable, ServiceUnavailableException } from '@nestjs/common';

const COUNTRIES: Record<string, { name: string; currency: string; capital: string }> = {
  FR: { name: 'France', currency: 'EUR', capital: 'Paris' },
  DE: { name: 'Germany', currency: 'EUR', capital: 'Berlin' },
  IT: { name: 'Italy', currency: 'EUR', capital: 'Rome' },
  ES: { name: 'Spain', currency: 'EUR', capital: 'Madrid' },
  GB: { name: 'United Kingdom', currency: 'GBP', capital: 'London' },
  CH: { name: 'Switzerland', currency: 'CHF', capital: 'Bern' },
  JP: { name: 'Japan', currency: 'JPY', capital: 'Tokyo' },
  US: { name: 'United States', currency: 'USD', capital: 'Washington' },
};

/** A simulated remote reference-data service that can be switched off (POST /upstream/outage). */
@Injectable()
export class CountryUpstream {
  down = false;
  calls = 0;

  private check(): void {
    this.calls++;
    if (this.down) throw new ServiceUnavailableException('reference-data upstream is down');
  }

  async country(
    code: string,
  ): Promise<{ code: string; name: string; currency: string; capital: string } | undefined> {
    this.check();
    const known = COUNTRIES[code.toUpperCase()];
    return known && { code: code.toUpperCase(), ...known };
  }

  /** A rate that moves a little on every call, so a stale one is easy to spot. */
  async rate(currency: string): Promise<number> {
    this.check();
    const base: Record<string, number> = { EUR: 1, GBP: 0.86, CHF: 0.94, JPY: 162.4, USD: 1.08 };
    const rate = base[currency.toUpperCase()];
    if (rate === undefined) throw new ServiceUnavailableException(`no rate for ${currency}`);
    return Number((rate * (1 + (Math.random() - 0.5) / 100)).toFixed(4));
  }
}
