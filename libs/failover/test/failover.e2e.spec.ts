import { Injectable, Logger, Module, SetMetadata, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { startFailoverApp, withAppBehindProxy } from './support/failover-app';
import { toNumber, statement } from '@holdfast/core/kit';
import { describeEachDatabase, testDataSourceOptions, type TestDatabaseContext } from '@holdfast/testing';
import {
  Failover,
  FailoverCleanupService,
  FailoverExecutor,
  FailoverHealthIndicator,
  FailoverMetrics,
  FailoverModule,
  RecoveredPayloadHandler,
  Referential,
  type FailoverModuleOptions,
  type KeyGenerator,
  type RecoveryContext,
} from '@holdfast/failover';
import { failoverKey } from '@holdfast/failover/internal';

class Country extends Referential {
  code!: string;
  name!: string;
  fetchedAt!: Date;
}

class UpstreamDown extends Error {
  constructor(readonly status = 503) {
    super('upstream is down');
  }
}

/** A simulated upstream the tests switch off. */
@Injectable()
class CountryUpstream {
  up = true;
  calls = 0;
  async fetch(code: string): Promise<Country> {
    this.calls++;
    if (!this.up) throw new UpstreamDown();
    return Object.assign(new Country(), { code, name: `Country ${code}`, fetchedAt: new Date() });
  }
}

const CUSTOM_META = 'test:custom';

/** Keys on the country code only, whatever else is passed. */
class CodeOnlyKey implements KeyGenerator {
  key(args: readonly unknown[]) {
    return String(args[0]);
  }
}

@Injectable()
class CountryService {
  constructor(readonly upstream: CountryUpstream) {}

  @SetMetadata(CUSTOM_META, 'kept')
  @Failover({ name: 'country-by-code', type: Country, domain: 'countries', expiry: '1h' })
  async findByCode(code: string): Promise<Country> {
    return this.upstream.fetch(code);
  }

  /** Same domain, other name: recovers what findByCode stored and the other way round. */
  @Failover({ name: 'country-by-code-v2', type: Country, domain: 'countries' })
  async findByCodeV2(code: string): Promise<Country> {
    return this.upstream.fetch(code);
  }

  @Failover({ name: 'short-lived', type: Country, expiry: 50 })
  async shortLived(code: string): Promise<Country> {
    return this.upstream.fetch(code);
  }

  @Failover({
    name: 'only-on-503',
    type: Country,
    keyGenerator: CodeOnlyKey,
    recoverOn: (e) => e instanceof UpstreamDown && e.status === 503,
  })
  async onlyOn503(code: string, status = 503): Promise<Country> {
    if (!this.upstream.up) throw new UpstreamDown(status);
    return this.upstream.fetch(code);
  }

  /** Calls its own decorated method through `this`. */
  async viaSelf(code: string): Promise<Country> {
    return this.findByCode(code);
  }
}

/** Calls the failover from another provider (where interceptors never run). */
@Injectable()
class ReportService {
  constructor(private readonly countries: CountryService) {}
  async countryName(code: string): Promise<string> {
    return (await this.countries.findByCode(code)).name;
  }
}

@Injectable()
class FallbackCountries extends RecoveredPayloadHandler {
  recover(ctx: RecoveryContext) {
    return ctx.name === 'short-lived' && ctx.args[0] === 'ZZ'
      ? { code: 'ZZ', name: 'from handler' }
      : undefined;
  }
}

@Module({
  providers: [CountryUpstream, CountryService, ReportService],
  exports: [CountryService, ReportService],
})
class CountriesModule {}

function app(
  ctx: TestDatabaseContext,
  options: Partial<FailoverModuleOptions> = {},
): Promise<INestApplication> {
  return startFailoverApp(ctx, options, { imports: [CountriesModule] });
}

describeEachDatabase(
  'Failover end to end',
  (ctx) => {
    let nest: INestApplication;
    let countries: CountryService;
    let upstream: CountryUpstream;
    const table = () => `${ctx.prefix}FAILOVER_STORE`;
    const rowCount = async () =>
      toNumber((await ctx.sql.query<{ n: unknown }>(statement(`SELECT COUNT(*) AS n FROM ${table()}`)))[0].n);
    const flush = () => nest.get(FailoverExecutor).flush();

    beforeAll(async () => {
      nest = await app(ctx, { recoveredPayloadHandler: FallbackCountries });
      countries = nest.get(CountryService);
      upstream = nest.get(CountryUpstream);
    });
    afterAll(() => nest?.close());
    beforeEach(async () => {
      upstream.up = true;
      await ctx.sql.execute(statement(`DELETE FROM ${table()}`));
    });

    it('a success returns the value and stores one row', async () => {
      const fr = await countries.findByCode('FR');
      expect(fr).toMatchObject({ code: 'FR', upToDate: true });
      await flush();
      expect(await rowCount()).toBe(1);
      const [row] = await ctx.sql.query<{ k: string; n: string }>(
        statement(`SELECT FAILOVER_KEY AS k, FAILOVER_NAME AS n FROM ${table()}`),
      );
      expect(row).toEqual({ n: 'countries', k: failoverKey('countries', 'FR') });
    });

    it('a failure recovers the stored value, marked stale with the stored asOf and the cause', async () => {
      const fresh = await countries.findByCode('DE');
      await flush();
      upstream.up = false;
      const stale = await countries.findByCode('DE');
      expect(stale).toBeInstanceOf(Country);
      expect(stale.upToDate).toBe(false);
      expect(stale.name).toBe('Country DE');
      expect(stale.fetchedAt).toBeInstanceOf(Date);
      expect(stale.fetchedAt.getTime()).toBe(fresh.fetchedAt.getTime());
      expect(stale.asOf).toBeInstanceOf(Date);
      expect(Math.abs(stale.asOf!.getTime() - fresh.fetchedAt.getTime())).toBeLessThan(1_000);
      expect(stale.metadata?.cause).toBeInstanceOf(UpstreamDown);
      expect(JSON.parse(JSON.stringify(stale.metadata))).toEqual({
        causeType: 'UpstreamDown',
        causeMessage: 'upstream is down',
      });
      expect(nest.get(FailoverMetrics).outcomes.recovered).toBeGreaterThan(0);
    });

    it('calls from another provider and self-calls through `this` both go through the failover', async () => {
      await nest.get(ReportService).countryName('IT');
      await countries.viaSelf('ES');
      await flush();
      upstream.up = false;
      expect(await nest.get(ReportService).countryName('IT')).toBe('Country IT');
      expect((await countries.viaSelf('ES')).upToDate).toBe(false);
    });

    it('with nothing stored, rethrows the original error', async () => {
      upstream.up = false;
      const error = await countries.findByCode('NOPE').catch((e) => e);
      expect(error).toBeInstanceOf(UpstreamDown);
      expect(error.message).toBe('upstream is down');
    });

    it('an expired row is not served and is deleted', async () => {
      await countries.shortLived('PT');
      await flush();
      expect(await rowCount()).toBe(1);
      await new Promise((r) => setTimeout(r, 120));
      upstream.up = false;
      await expect(countries.shortLived('PT')).rejects.toBeInstanceOf(UpstreamDown);
      await flush();
      expect(await rowCount()).toBe(0);
    });

    it('a RecoveredPayloadHandler supplies a value when nothing is stored', async () => {
      upstream.up = false;
      expect(await countries.shortLived('ZZ')).toEqual({ code: 'ZZ', name: 'from handler' });
    });

    it('two failovers sharing a domain recover each other’s entries', async () => {
      await countries.findByCode('NL');
      await countries.findByCodeV2('BE');
      await flush();
      upstream.up = false;
      expect((await countries.findByCodeV2('NL')).name).toBe('Country NL');
      expect((await countries.findByCode('BE')).name).toBe('Country BE');
      expect(await rowCount()).toBe(2);
    });

    it('recoverOn decides which errors are answered from the store', async () => {
      await countries.onlyOn503('AT');
      await flush();
      upstream.up = false;
      expect((await countries.onlyOn503('AT', 503)).upToDate).toBe(false);
      // the entry exists under the same key, yet a 404 is not answered from it
      const error = await countries.onlyOn503('AT', 404).catch((e) => e);
      expect(error).toBeInstanceOf(UpstreamDown);
      expect(error.status).toBe(404);
    });

    it('keeps the metadata other decorators put on the method', () => {
      expect(Reflect.getMetadata(CUSTOM_META, CountryService.prototype.findByCode)).toBe('kept');
    });

    it('cleanup deletes expired rows using the database clock', async () => {
      await countries.shortLived('GR');
      await countries.findByCode('GR');
      await flush();
      await new Promise((r) => setTimeout(r, 120));
      expect(await nest.get(FailoverCleanupService).cleanup()).toBe(1);
      expect(await rowCount()).toBe(1);
    });

    it('reports health through terminus', async () => {
      const health = await nest.get(FailoverHealthIndicator).isHealthy();
      expect(health.failover.status).toBe('up');
    });

    it("'never-throw' returns null when nothing can be recovered", async () => {
      const lenient = await app(ctx, { exceptionPolicy: 'never-throw' });
      try {
        lenient.get(CountryUpstream).up = false;
        expect(await lenient.get(CountryService).findByCode('XX')).toBeNull();
      } finally {
        await lenient.close();
      }
    });

    it('a graceful shutdown waits for pending async writes', async () => {
      const short = await app(ctx);
      await Promise.all(['A1', 'A2', 'A3', 'A4'].map((c) => short.get(CountryService).findByCode(c)));
      await short.close();
      expect(await rowCount()).toBe(4);
    });

    // An embedded SQLite file has no connection to cut: this one runs on the servers only.
    const serverOnly = ctx.db === 'sqlite' ? () => undefined : it;
    serverOnly(
      'with the database cut off, a succeeding call still returns its value; the failed write is counted',
      async () => {
        await withAppBehindProxy(
          ctx,
          (viaProxy) => app(viaProxy as TestDatabaseContext),
          async (cut, proxy) => {
            expect((await cut.get(CountryService).findByCode('SE')).code).toBe('SE');
            await cut.get(FailoverExecutor).flush();
            proxy.cut();
            const metrics = cut.get(FailoverMetrics);
            const before = metrics.storeErrors;
            expect((await cut.get(CountryService).findByCode('NO')).code).toBe('NO');
            await cut.get(FailoverExecutor).flush();
            expect(metrics.storeErrors).toBe(before + 1);
            // the upstream down too: recovery cannot reach the store, so the original error comes back
            cut.get(CountryUpstream).up = false;
            await expect(cut.get(CountryService).findByCode('SE')).rejects.toBeInstanceOf(UpstreamDown);
            expect((await cut.get(FailoverHealthIndicator).isHealthy()).failover.status).toBe('down');
          },
        );
      },
    );

    it('works with the DataSource of TypeOrmModule.forRoot (the default one)', async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          TypeOrmModule.forRoot(
            ctx.db === 'sqlite'
              ? {
                  ...testDataSourceOptions('sqlite', {
                    sqliteFile: (ctx.dataSource.options as { database: string }).database,
                  }),
                }
              : testDataSourceOptions(ctx.db),
          ),
          FailoverModule.forRootAsync({
            useFactory: () => ({
              store: { type: 'sql', tablePrefix: ctx.prefix },
              cleanup: { enabled: false },
            }),
          }),
          CountriesModule,
        ],
      }).compile();
      const withTypeOrm = await moduleRef.createNestApplication({ logger: false }).init();
      try {
        await withTypeOrm.get(CountryService).findByCode('LU');
        await withTypeOrm.get(FailoverExecutor).flush();
        withTypeOrm.get(CountryUpstream).up = false;
        expect((await withTypeOrm.get(CountryService).findByCode('LU')).upToDate).toBe(false);
      } finally {
        await withTypeOrm.close();
      }
    });

    it('warns with the exact CREATE INDEX when the EXPIRE_ON index is missing', async () => {
      const prefix = `${ctx.prefix}noidx_`;
      await ctx.sql.execute(
        statement(
          `CREATE TABLE ${prefix}FAILOVER_STORE (FAILOVER_NAME VARCHAR(50) NOT NULL, FAILOVER_KEY VARCHAR(256) NOT NULL, ` +
            `AS_OF ${ctx.sql.dialect.columnType({ kind: 'timestamp' })} NOT NULL, EXPIRE_ON ${ctx.sql.dialect.columnType({ kind: 'timestamp' })} NOT NULL, ` +
            `PAYLOAD ${ctx.sql.dialect.columnType({ kind: 'text' })}, PAYLOAD_CLASS VARCHAR(256), PRIMARY KEY (FAILOVER_NAME, FAILOVER_KEY))`,
        ),
      );
      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      try {
        const checked = await app({ ...ctx, prefix } as TestDatabaseContext, {
          store: { type: 'sql', dataSource: ctx.dataSource, tablePrefix: prefix, schema: 'check' },
        });
        await checked.close();
        const messages = warn.mock.calls.map((c) => String(c[0]));
        expect(
          messages.some((m) =>
            m.includes(
              `CREATE INDEX ${prefix}FAILOVER_STORE_EXPIRE_ON_IDX ON ${prefix}FAILOVER_STORE (EXPIRE_ON)`,
            ),
          ),
        ).toBe(true);
      } finally {
        warn.mockRestore();
        await ctx.sql.execute(statement(`DROP TABLE ${prefix}FAILOVER_STORE`));
      }
    });
  },
  { tables: ['FAILOVER_STORE'] },
);
