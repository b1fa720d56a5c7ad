// README tour: @holdfast/failover. Type-checked with the rest of the repo (npm run typecheck).
import { Injectable, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Failover, FailoverModule, Referential } from '@holdfast/failover';

export class Country extends Referential {
  code!: string;
  name!: string;
}

@Injectable()
export class CountryService {
  @Failover({ name: 'country-by-code', type: Country, expiry: '1h' })
  async findByCode(code: string): Promise<Country> {
    const res = await fetch(`https://reference.example/countries/${code}`);
    if (!res.ok) throw new Error(`upstream answered ${res.status}`);
    return Object.assign(new Country(), await res.json());
  }
}

@Module({
  imports: [
    TypeOrmModule.forRoot({ type: 'better-sqlite3', database: 'app.sqlite', migrationsRun: true }),
    FailoverModule.forRoot({ store: { type: 'sql', schema: 'create' } }),
  ],
  providers: [CountryService],
})
export class FailoverExampleModule {}
// While the upstream is down, findByCode('FR') returns the last good Country with
// upToDate === false and asOf === when it was fetched.
