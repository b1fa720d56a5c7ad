import { Injectable, type INestApplication, type Type } from '@nestjs/common';
import { startFailoverApp, withAppBehindProxy } from './support/failover-app';
import { sleep, toNumber, statement } from '@holdfast/core/kit';
import { describeEachDatabase, type TestDatabaseContext } from '@holdfast/testing';
import {
  Failover,
  FailoverCleanupService,
  FailoverExecutor,
  FailoverMetrics,
  FailoverTenant,
  FailoverTenantError,
  ListPayloadSplitter,
  PayloadDecryptionError,
  Referential,
  getFailoverStoreToken,
  type FailoverModuleOptions,
  type KeyGenerator,
} from '@holdfast/failover';
import { FailoverStores, SqlFailoverStore } from '@holdfast/failover/internal';

class Country extends Referential {
  code!: string;
  name!: string;
}

class CountrySplitter extends ListPayloadSplitter<Country> {
  protected idOf(country: Country) {
    return country.code;
  }
}

/** Keys the hot method on its code only, so every version of a code hits the same entry. */
class CodeOnlyKey implements KeyGenerator {
  key(args: readonly unknown[]) {
    return String(args[0]);
  }
}

class Upstream {
  up = true;
  calls = 0;
  version = 0;
  async countries(codes: string[]): Promise<Country[]> {
    this.calls++;
    if (!this.up) throw new Error('upstream down');
    return codes.map((code) =>
      Object.assign(new Country(), { code, name: `Country ${code} v${this.version}` }),
    );
  }
}

@Injectable()
class CountryService {
  readonly upstream = new Upstream();

  @Failover({ name: 'countries-list', domain: 'country', type: [Country], payloadSplitter: CountrySplitter })
  async findByCodes(codes: string[]): Promise<Country[]> {
    return this.upstream.countries(codes);
  }

  @Failover({ name: 'country-one', domain: 'country', type: Country })
  async findByCode(code: string): Promise<Country> {
    return (await this.upstream.countries([code]))[0];
  }

  @Failover({
    name: 'all-countries',
    domain: 'country',
    type: [Country],
    payloadSplitter: CountrySplitter,
    recoverAll: true,
  })
  async all(): Promise<Country[]> {
    return this.upstream.countries(['FR', 'DE']);
  }

  @Failover({
    name: 'guarded',
    type: Country,
    execution: { circuitBreaker: { consecutiveFailures: 3, halfOpenAfter: '1h' } },
  })
  async guarded(code: string): Promise<Country> {
    return (await this.upstream.countries([code]))[0];
  }

  @Failover({ name: 'hot', type: Country, keyGenerator: CodeOnlyKey })
  async hot(code: string, version: number): Promise<Country> {
    return Object.assign(new Country(), { code, name: `v${version}` });
  }
}

function start(
  ctx: TestDatabaseContext,
  options: Partial<FailoverModuleOptions> = {},
  providers: Type[] = [CountryService],
) {
  return startFailoverApp(ctx, options, { providers });
}

describeEachDatabase(
  'Failover, complete',
  (ctx) => {
    const count = async (table: string, where = '1 = 1') =>
      toNumber(
        (
          await ctx.sql.query<{ n: unknown }>(statement(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`))
        )[0].n,
      );
    const global = () => `${ctx.prefix}FAILOVER_STORE`;
    const serverOnly = ctx.db === 'sqlite' ? () => undefined : it;

    describe('scatter/gather', () => {
      let app: INestApplication;
      let service: CountryService;
      beforeAll(async () => {
        app = await start(ctx);
        service = app.get(CountryService);
      });
      afterAll(() => app.close());
      beforeEach(async () => {
        service.upstream.up = true;
        await ctx.sql.execute(statement(`DELETE FROM ${global()}`));
      });

      it('stores one row per id, recovers in request order, null for a missing slice', async () => {
        await service.findByCodes(['FR', 'DE', 'IT']);
        await app.get(FailoverExecutor).flush();
        expect(await count(global())).toBe(3);
        service.upstream.up = false;
        const recovered = await service.findByCodes(['IT', 'DE', 'FR']);
        expect(recovered.map((c) => c.code)).toEqual(['IT', 'DE', 'FR']);
        expect(recovered.every((c) => c instanceof Country && c.upToDate === false)).toBe(true);
        const partial = await service.findByCodes(['DE', 'ES', 'FR']);
        expect(partial.map((c) => c?.code ?? null)).toEqual(['DE', null, 'FR']);
      });

      it('storing 2 ids then 3 leaves 3 rows', async () => {
        await service.findByCodes(['FR', 'DE']);
        await service.findByCodes(['FR', 'DE', 'IT']);
        await app.get(FailoverExecutor).flush();
        expect(await count(global())).toBe(3);
      });

      it('a single-entity method and the list method recover each other’s entries (shared domain)', async () => {
        await service.findByCodes(['NL', 'BE']);
        await service.findByCode('LU');
        await app.get(FailoverExecutor).flush();
        service.upstream.up = false;
        expect((await service.findByCode('NL')).name).toBe('Country NL v0');
        expect((await service.findByCodes(['LU', 'BE'])).map((c) => c.code)).toEqual(['LU', 'BE']);
      });

      it('recoverAll returns every stored entry of the domain', async () => {
        await service.all();
        await service.findByCode('PT');
        await app.get(FailoverExecutor).flush();
        service.upstream.up = false;
        expect((await service.all()).map((c) => c.code).sort()).toEqual(['DE', 'FR', 'PT']);
      });

      it('parallel gives the same results as sequential, and a slow slice times out as missing', async () => {
        const parallel = await start({ ...ctx } as TestDatabaseContext, {
          scatter: { parallel: true, timeout: 200 },
        });
        try {
          const p = parallel.get(CountryService);
          await p.findByCodes(['FR', 'DE', 'IT']);
          await parallel.get(FailoverExecutor).flush();
          p.upstream.up = false;
          service.upstream.up = false;
          const sequentialResult = await service.findByCodes(['IT', 'XX', 'FR']);
          const parallelResult = await p.findByCodes(['IT', 'XX', 'FR']);
          expect(parallelResult.map((c) => c?.code ?? null)).toEqual(
            sequentialResult.map((c) => c?.code ?? null),
          );

          const store = parallel.get<SqlFailoverStore>(getFailoverStoreToken());
          const find = store.find.bind(store);
          const slow = jest.spyOn(store, 'find').mockImplementation(async (name, key, type) => {
            const found = await find(name, key, type);
            if ((found?.payload as Country | undefined)?.code === 'DE') await sleep(1_000);
            return found as never;
          });
          const started = Date.now();
          const timedOut = await p.findByCodes(['FR', 'DE', 'IT']);
          expect(timedOut.map((c) => c?.code ?? null)).toEqual(['FR', null, 'IT']);
          expect(Date.now() - started).toBeLessThan(900);
          slow.mockRestore();
        } finally {
          await parallel.close();
        }
      });
    });

    describe('multi-tenant', () => {
      let app: INestApplication;
      let service: CountryService;
      const tenantTable = (t: string) => `${t}_${ctx.prefix}FAILOVER_STORE`;
      beforeAll(async () => {
        app = await start(ctx, {
          multiTenant: {
            tenants: { acme: { tablePrefix: 'acme_' }, globex: { tablePrefix: 'globex_' } },
            defaultTenant: undefined,
          },
        });
        service = app.get(CountryService);
        await ctx.sql.execute(statement(`DELETE FROM ${global()}`));
      });
      afterAll(async () => {
        await app.close();
        for (const t of ['acme', 'globex'])
          await ctx.sql.execute(statement(`DROP TABLE IF EXISTS ${tenantTable(t)}`));
      });

      it('writes go only to the tenant’s table; another tenant recovers nothing', async () => {
        service.upstream.up = true;
        await FailoverTenant.run('acme', () => service.findByCode('FR'));
        await app.get(FailoverExecutor).flush();
        await app.get(FailoverStores).all(); // builds (and creates) every listed tenant's table
        expect(await count(tenantTable('acme'))).toBe(1);
        expect(await count(tenantTable('globex'))).toBe(0);
        expect(await count(global())).toBe(0);
        service.upstream.up = false;
        await expect(FailoverTenant.run('globex', () => service.findByCode('FR'))).rejects.toThrow(
          'upstream down',
        );
        expect((await FailoverTenant.run('acme', () => service.findByCode('FR'))).code).toBe('FR');
      });

      it('the same key in two tenants holds independent values', async () => {
        service.upstream.up = true;
        service.upstream.version = 1;
        await FailoverTenant.run('acme', () => service.findByCode('DE'));
        service.upstream.version = 2;
        await FailoverTenant.run('globex', () => service.findByCode('DE'));
        await app.get(FailoverExecutor).flush();
        service.upstream.up = false;
        expect((await FailoverTenant.run('acme', () => service.findByCode('DE'))).name).toBe('Country DE v1');
        expect((await FailoverTenant.run('globex', () => service.findByCode('DE'))).name).toBe(
          'Country DE v2',
        );
      });

      it('no tenant and no default is a typed error; an unknown tenant uses the global table', async () => {
        service.upstream.up = true;
        await expect(service.findByCode('IT')).rejects.toBeInstanceOf(FailoverTenantError);
        await FailoverTenant.run('initech', () => service.findByCode('IT'));
        await app.get(FailoverExecutor).flush();
        expect(await count(global(), `FAILOVER_NAME = 'country'`)).toBeGreaterThanOrEqual(1);
      });

      it('strict mode refuses an unknown tenant', async () => {
        const strict = await start(ctx, {
          multiTenant: { tenants: { acme: { tablePrefix: 'acme_' } }, strict: true },
        });
        try {
          await expect(
            FailoverTenant.run('initech', () => strict.get(CountryService).findByCode('IT')),
          ).rejects.toThrow(/Unknown tenant "initech"/);
        } finally {
          await strict.close();
        }
      });

      it('64 concurrent first calls for one tenant build one store', async () => {
        const fresh = await start(ctx, { multiTenant: { tenants: { acme: { tablePrefix: 'acme_' } } } });
        try {
          const s = fresh.get(CountryService);
          await Promise.all(
            Array.from({ length: 64 }, (_, i) => FailoverTenant.run('acme', () => s.findByCode(`C${i}`))),
          );
          expect(fresh.get(FailoverStores).built).toBe(1);
        } finally {
          await fresh.close();
        }
      });

      it('cleanup sweeps every tenant table', async () => {
        const past = ctx.sql.dialect.timestampParam(new Date(Date.now() - 60_000));
        for (const table of [tenantTable('acme'), tenantTable('globex'), global()]) {
          await ctx.sql.execute(
            statement(
              `INSERT INTO ${table} (FAILOVER_NAME, FAILOVER_KEY, AS_OF, EXPIRE_ON, PAYLOAD, PAYLOAD_CLASS) VALUES (${ctx.sql.dialect.placeholders(6)})`,
              ['old', `expired-${table}`, past, past, '{}', 'Object'],
            ),
          );
        }
        expect(await app.get(FailoverCleanupService).cleanup()).toBe(3);
        for (const table of [tenantTable('acme'), tenantTable('globex'), global()]) {
          expect(await count(table, `FAILOVER_NAME = 'old'`)).toBe(0);
        }
      });
    });

    describe('batched write-behind', () => {
      beforeEach(() => ctx.sql.execute(statement(`DELETE FROM ${global()}`)));

      it('10,000 async stores through a 1,000-slot queue over 50 keys leave exactly 50 rows with the latest values after shutdown', async () => {
        const app = await start(ctx, { async: { maxQueue: 1_000, maxBatch: 200, flushInterval: 20 } });
        const service = app.get(CountryService);
        const metrics = app.get(FailoverMetrics);
        for (let i = 0; i < 10_000; i += 100) {
          await Promise.all(Array.from({ length: 100 }, (_, j) => service.hot(`K${(i + j) % 50}`, i + j)));
        }
        await app.close();
        expect(await count(global())).toBe(50);
        const rows = await ctx.sql.query<{ payload: string }>(
          statement(`SELECT PAYLOAD AS payload FROM ${global()}`),
        );
        const latest = new Set(rows.map((r) => JSON.parse(r.payload).name));
        for (let k = 0; k < 50; k++) expect(latest.has(`v${9_950 + k}`)).toBe(true);
        expect(metrics.droppedWrites).toBe(0);
        expect(metrics.rowsWritten).toBeLessThan(10_000);
        expect(metrics.writeCalls).toBeLessThan(metrics.rowsWritten);
      });

      it('a full queue drops the oldest pending write and counts it (drop-oldest)', async () => {
        const app = await start(ctx, { async: { maxQueue: 10, maxBatch: 1_000, flushInterval: 60_000 } });
        const service = app.get(CountryService);
        for (let i = 0; i < 15; i++) await service.hot(`D${i}`, i);
        expect(app.get(FailoverMetrics).droppedWrites).toBe(5);
        await app.close();
        expect(await count(global())).toBe(10);
        expect(await count(global(), `PAYLOAD LIKE '%"v0"%'`)).toBe(0);
      });

      serverOnly(
        'a database outage during flushing is counted and the business calls still return',
        async () => {
          await withAppBehindProxy(
            ctx,
            (viaProxy) => start(viaProxy as TestDatabaseContext, { async: { flushInterval: 20 } }),
            async (app, proxy) => {
              const service = app.get(CountryService);
              const metrics = app.get(FailoverMetrics);
              proxy.cut();
              for (let i = 0; i < 20; i++) expect((await service.hot(`O${i}`, i)).name).toBe(`v${i}`);
              await app.get(FailoverExecutor).flush();
              expect(metrics.storeErrors).toBeGreaterThanOrEqual(1);
            },
          );
        },
      );
    });

    it('circuit breaker: once open, the upstream is not called and the stored value is served', async () => {
      const app = await start(ctx);
      try {
        const service = app.get(CountryService);
        await service.guarded('CH');
        await app.get(FailoverExecutor).flush();
        service.upstream.up = false;
        for (let i = 0; i < 3; i++) expect((await service.guarded('CH')).upToDate).toBe(false);
        const callsWhenOpen = service.upstream.calls;
        for (let i = 0; i < 10; i++) {
          const value = await service.guarded('CH');
          expect(value.code).toBe('CH');
          expect(value.upToDate).toBe(false);
        }
        expect(service.upstream.calls).toBe(callsWhenOpen);
      } finally {
        await app.close();
      }
    });

    describe('payload encryption', () => {
      const key = Buffer.alloc(32, 7).toString('base64');
      beforeEach(() => ctx.sql.execute(statement(`DELETE FROM ${global()}`)));

      it('keeps no plaintext at rest, reads old plaintext rows, and detects tampering and wrong keys', async () => {
        const plain = await start(ctx);
        await plain.get(CountryService).findByCode('GB');
        await plain.close();

        const encrypted = await start(ctx, {
          store: {
            type: 'sql',
            dataSource: ctx.dataSource,
            tablePrefix: ctx.prefix,
            encryption: { enabled: true, key },
          },
        });
        const service = encrypted.get(CountryService);
        try {
          await service.findByCode('JP');
          await encrypted.get(FailoverExecutor).flush();
          const rows = await ctx.sql.query<{ payload: string }>(
            statement(`SELECT PAYLOAD AS payload FROM ${global()}`),
          );
          const sealed = rows.filter((r) => r.payload.startsWith('ENC(aes-256-gcm:'));
          expect(sealed).toHaveLength(1);
          // Base64 text can contain any short string by chance; the plaintext has spaces, it cannot.
          expect(sealed[0].payload).not.toContain('Country JP v0');
          const sealedBytes = Buffer.from(sealed[0].payload.slice('ENC(aes-256-gcm:'.length, -1), 'base64');
          expect(sealedBytes.includes('Country JP v0')).toBe(false);
          expect(sealedBytes.includes('"code"')).toBe(false);

          service.upstream.up = false;
          expect((await service.findByCode('JP')).name).toBe('Country JP v0');
          expect((await service.findByCode('GB')).name).toBe('Country GB v0');

          const body = sealed[0].payload.slice('ENC(aes-256-gcm:'.length, -1);
          const bytes = Buffer.from(body, 'base64');
          bytes[bytes.length - 1] ^= 0xff;
          await ctx.sql.execute(
            statement(
              `UPDATE ${global()} SET PAYLOAD = ${ctx.sql.dialect.placeholder(1)} WHERE PAYLOAD LIKE 'ENC(%'`,
              [`ENC(aes-256-gcm:${bytes.toString('base64')})`],
            ),
          );
          const error = await service.findByCode('JP').catch((e) => e);
          expect(error.message).toBe('upstream down');
          expect(await count(global())).toBe(2);
        } finally {
          await encrypted.close();
        }

        const wrongKey = await start(ctx, {
          store: {
            type: 'sql',
            dataSource: ctx.dataSource,
            tablePrefix: ctx.prefix,
            encryption: { enabled: true, key: Buffer.alloc(32, 9) },
          },
        });
        try {
          await wrongKey.get(CountryService).findByCode('KR');
          await wrongKey.get(FailoverExecutor).flush();
          const { EncryptingPayloadColumnResolver, Aes256GcmCipher } =
            await import('@holdfast/failover/internal');
          const reader = new SqlFailoverStore({
            sql: ctx.sql,
            tablePrefix: ctx.prefix,
            rows: {
              payloadColumn: new EncryptingPayloadColumnResolver(new Aes256GcmCipher(Buffer.alloc(32, 7))),
            },
          });
          await reader.init();
          const keys = await ctx.sql.query<{ k: string }>(
            statement(
              `SELECT FAILOVER_KEY AS k FROM ${global()} WHERE FAILOVER_NAME = 'country' AND PAYLOAD LIKE 'ENC(%'`,
            ),
          );
          expect(keys.length).toBeGreaterThan(0);
          const results = await Promise.all(keys.map((r) => reader.find('country', r.k).catch((e) => e)));
          expect(results.some((r) => r instanceof PayloadDecryptionError)).toBe(true);
        } finally {
          await wrongKey.close();
        }
      });

      it('refuses a key of the wrong size at startup without printing it', async () => {
        const error = await start(ctx, {
          store: {
            type: 'sql',
            dataSource: ctx.dataSource,
            tablePrefix: ctx.prefix,
            encryption: { enabled: true, key: 'c2hvcnQ=' },
          },
        }).catch((e) => e);
        expect(error.message).toMatch(/option 'store.encryption': 'key' must be 32 bytes/);
        expect(error.message).not.toContain('c2hvcnQ=');
      });
    });
  },
  { tables: ['FAILOVER_STORE'] },
);
