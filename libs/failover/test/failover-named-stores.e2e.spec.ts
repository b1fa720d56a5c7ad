import { Injectable, Module, type INestApplication, type ModuleMetadata } from '@nestjs/common';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { toNumber, statement } from '@holdfast/core/kit';
import { describeEachDatabase, testDataSourceOptions } from '@holdfast/testing';
import {
  DuplicateFailoverStoreError,
  Failover,
  FailoverConfigurationError,
  FailoverExecutor,
  FailoverModule,
  getFailoverStoreToken,
  getFailoverToken,
  InjectFailoverExecutor,
  InjectFailoverOptions,
  InjectFailoverStore,
  UnknownFailoverStoreError,
  type FailoverStore,
  type ResolvedFailoverOptions,
} from '@holdfast/failover';
import { failoverKey } from '@holdfast/failover/internal';
import { failoverJobName } from '../src/failover.tokens';

/**
 * Two failover stores in one application (issue 14, item 4), as two inboxes: the default
 * FailoverModule and `name: 'reports'`, each with its own DataSource and table, each serving
 * its own `@Failover` methods (`store: 'reports'` for the named one), injected by `InjectX(name)`.
 */

class UpstreamDown extends Error {}

@Injectable()
class Upstream {
  up = true;
  answer(what: string, id: string): { what: string; id: string } {
    if (!this.up) throw new UpstreamDown(`${what} is down`);
    return { what, id };
  }
}

/** One class, two stores: each method reaches its own store's executor. */
@Injectable()
class Catalog {
  constructor(private readonly upstream: Upstream) {}

  @Failover({ name: 'named-price' })
  async price(id: string) {
    return this.upstream.answer('price', id);
  }

  @Failover({ name: 'named-ranking', store: 'reports' })
  async ranking(id: string) {
    return this.upstream.answer('ranking', id);
  }
}

@Injectable()
class Consumer {
  constructor(
    readonly executor: FailoverExecutor,
    @InjectFailoverExecutor() readonly defaultExecutor: FailoverExecutor,
    @InjectFailoverExecutor('reports') readonly reportsExecutor: FailoverExecutor,
    @InjectFailoverStore() readonly defaultStore: FailoverStore,
    @InjectFailoverStore('reports') readonly reportsStore: FailoverStore,
    @InjectFailoverOptions() readonly defaultOptions: ResolvedFailoverOptions,
    @InjectFailoverOptions('reports') readonly reportsOptions: ResolvedFailoverOptions,
  ) {}
}

/** Imports neither FailoverModule: both are global. */
@Module({ providers: [Upstream, Catalog, Consumer] })
class FeatureModule {}

describeEachDatabase(
  'two named failover stores in one application',
  (ctx) => {
    let app: INestApplication;
    let consumer: Consumer;
    const prefixOf = { default: () => `${ctx.prefix}a_`, reports: () => `${ctx.prefix}b_` };
    /** Rows per FAILOVER_NAME in one store's table. */
    const rows = async (store: 'default' | 'reports') => {
      const found = await ctx.sql.query<{ name: string; n: unknown }>(
        statement(
          `SELECT FAILOVER_NAME AS name, COUNT(*) AS n FROM ${prefixOf[store]()}FAILOVER_STORE GROUP BY FAILOVER_NAME`,
        ),
      );
      return Object.fromEntries(found.map((row) => [row.name, toNumber(row.n)]));
    };

    beforeAll(async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          ScheduleModule.forRoot(),
          // The named store uses a second DataSource, TypeORM's 'reports' (SQLite: the same file).
          TypeOrmModule.forRoot({
            ...testDataSourceOptions(
              ctx.db,
              ctx.db === 'sqlite'
                ? { sqliteFile: (ctx.dataSource.options as { database: string }).database }
                : { poolSize: 2 },
            ),
            name: 'reports',
          }),
          FailoverModule.forRoot({
            store: {
              type: 'sql',
              dataSource: ctx.dataSource,
              tablePrefix: prefixOf.default(),
              schema: 'create',
            },
          }),
          FailoverModule.forRootAsync({
            name: 'reports',
            useFactory: () => ({
              store: {
                type: 'sql',
                dataSource: 'reports',
                tablePrefix: prefixOf.reports(),
                schema: 'create',
              },
              async: false,
            }),
          }),
          FeatureModule,
        ],
      }).compile();
      app = await moduleRef.createNestApplication({ logger: false }).init();
      consumer = app.select(FeatureModule).get(Consumer);
    });
    afterAll(() => app?.close());

    it('injects each store by its name; the default one also by its class', () => {
      expect(consumer.defaultExecutor).toBe(consumer.executor);
      expect(consumer.reportsExecutor).toBeInstanceOf(FailoverExecutor);
      expect(consumer.reportsExecutor).not.toBe(consumer.executor);
      expect(app.get(getFailoverToken(FailoverExecutor, 'reports'))).toBe(consumer.reportsExecutor);
      expect(getFailoverToken(FailoverExecutor)).toBe(FailoverExecutor);
      expect(app.get(getFailoverStoreToken('reports'))).toBe(consumer.reportsStore);
      expect(consumer.reportsStore).not.toBe(consumer.defaultStore);
      expect(consumer.defaultOptions.store).toMatchObject({ tablePrefix: prefixOf.default() });
      expect(consumer.reportsOptions.store).toMatchObject({
        tablePrefix: prefixOf.reports(),
        dataSource: 'reports',
      });
      expect(consumer.reportsOptions.async).toBe(false);
    });

    it('stores each decorated method in its own store', async () => {
      const catalog = app.get(Catalog);
      app.get(Upstream).up = true;
      await catalog.price('p1');
      await catalog.ranking('r1');
      await catalog.ranking('r2');
      await consumer.executor.flush();
      expect(await rows('default')).toEqual({ 'named-price': 1 });
      expect(await rows('reports')).toEqual({ 'named-ranking': 2 });
      // Each store's registry lists its own failovers only.
      expect(await consumer.reportsExecutor.liveEntryCount('named-ranking')).toBe(2);
      expect(await consumer.executor.liveEntryCount('named-price')).toBe(1);
      await expect(consumer.executor.liveEntryCount('named-ranking')).rejects.toMatchObject({
        code: 'HOLDFAST_FAILOVER_UNKNOWN',
      });
    });

    it('recovers each method from its own store, never from the other', async () => {
      const catalog = app.get(Catalog);
      // An entry of each failover planted in the other store: it must not be found.
      const now = await consumer.defaultStore.now!();
      const later = new Date(now.getTime() + 3_600_000);
      await consumer.reportsStore.store({
        name: 'named-price',
        key: failoverKey('named-price', 'p2'),
        asOf: now,
        expireOn: later,
        payload: { what: 'planted', id: 'p2' },
      });
      await consumer.defaultStore.store({
        name: 'named-ranking',
        key: failoverKey('named-ranking', 'r3'),
        asOf: now,
        expireOn: later,
        payload: { what: 'planted', id: 'r3' },
      });
      app.get(Upstream).up = false;
      try {
        await expect(catalog.price('p1')).resolves.toEqual({ what: 'price', id: 'p1' });
        await expect(catalog.ranking('r1')).resolves.toEqual({ what: 'ranking', id: 'r1' });
        await expect(catalog.price('p2')).rejects.toBeInstanceOf(UpstreamDown);
        await expect(catalog.ranking('r3')).rejects.toBeInstanceOf(UpstreamDown);
      } finally {
        app.get(Upstream).up = true;
      }
    });

    it('schedules each store its own cleanup timer', () => {
      const jobs = app.get(SchedulerRegistry).getTimeouts();
      expect(jobs).toEqual(
        expect.arrayContaining(['holdfast:failover:cleanup', 'holdfast:failover:reports:cleanup']),
      );
    });
  },
  { tag: 'fo2', tables: ['a_FAILOVER_STORE', 'b_FAILOVER_STORE'] },
);

describe('named failover stores: bad inputs', () => {
  const memory = { store: { type: 'memory' as const }, cleanup: { enabled: false } };
  const start = async (metadata: Pick<ModuleMetadata, 'imports' | 'providers'>) => {
    const moduleRef = await Test.createTestingModule(metadata).compile();
    return moduleRef.createNestApplication({ logger: false }).init();
  };

  it('an unknown store name is a typed error at bootstrap naming the failover and the store', async () => {
    @Injectable()
    class Orphan {
      @Failover({ name: 'orphan-quote', store: 'nowhere' })
      async quote() {
        return 1;
      }
    }
    const failure = await start({
      imports: [FailoverModule.forRoot(memory), FailoverModule.forRoot({ ...memory, name: 'reports' })],
      providers: [Orphan],
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(UnknownFailoverStoreError);
    expect(failure).toMatchObject({
      code: 'HOLDFAST_FAILOVER_UNKNOWN_STORE',
      failover: 'orphan-quote',
      store: 'nowhere',
      declaredOn: 'Orphan.quote',
      known: expect.arrayContaining(['default', 'reports']),
    });
    expect((failure as Error).message).toContain("Failover 'orphan-quote'");
    expect((failure as Error).message).toContain("store 'nowhere'");
  });

  it('a named store its module cannot see (isGlobal: false, not imported) is the same typed error', async () => {
    @Injectable()
    class Hidden {
      @Failover({ name: 'hidden-quote', store: 'local' })
      async quote() {
        return 1;
      }
    }
    @Module({ providers: [Hidden] })
    class HiddenModule {}
    const failure = await start({
      imports: [FailoverModule.forRoot({ ...memory, name: 'local', isGlobal: false }), HiddenModule],
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(UnknownFailoverStoreError);
    expect((failure as Error).message).toContain('not visible');
  });

  it('two FailoverModules of one name stop the bootstrap', async () => {
    const failure = await start({
      imports: [
        FailoverModule.forRoot({ ...memory, name: 'reports' }),
        FailoverModule.forRoot({ ...memory, name: 'reports', storeTimeout: '1s' }),
      ],
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(DuplicateFailoverStoreError);
    expect(failure).toMatchObject({ code: 'HOLDFAST_FAILOVER_DUPLICATE_STORE', store: 'reports' });
  });

  it('one failover name in two stores stops the bootstrap (names are unique in the app)', async () => {
    @Injectable()
    class Twice {
      @Failover({ name: 'twice' })
      async a() {
        return 1;
      }
      @Failover({ name: 'twice', store: 'reports' })
      async b() {
        return 2;
      }
    }
    await expect(
      start({
        imports: [FailoverModule.forRoot(memory), FailoverModule.forRoot({ ...memory, name: 'reports' })],
        providers: [Twice],
      }),
    ).rejects.toThrow(/Duplicate failover name 'twice'/);
  });

  it('refuses a blank module name and a blank store name at once', () => {
    expect(() => FailoverModule.forRoot({ ...memory, name: ' ' })).toThrow(FailoverConfigurationError);
    const method = { value: async () => 1 };
    expect(() => Failover({ name: 'x', store: '' })(class {}.prototype, 'm', method)).toThrow(
      FailoverConfigurationError,
    );
  });

  it('a named store works without a default one', async () => {
    @Injectable()
    class Only {
      calls = 0;
      @Failover({ name: 'only-named', store: 'solo' })
      async quote(id: string) {
        if (++this.calls > 1) throw new UpstreamDown('down');
        return { id };
      }
    }
    const app = await start({
      imports: [FailoverModule.forRoot({ ...memory, name: 'solo', async: false })],
      providers: [Only],
    });
    try {
      expect(await app.get(Only).quote('a')).toEqual({ id: 'a' });
      expect(await app.get(Only).quote('a')).toEqual({ id: 'a' });
      expect(app.get(getFailoverToken(FailoverExecutor, 'solo'))).toBeInstanceOf(FailoverExecutor);
    } finally {
      await app.close();
    }
  });
});

describe('named failover stores: names', () => {
  it('spells tokens and scheduler jobs as holdfast:failover:[<name>:]<what> (NamedInstances.key)', () => {
    expect(typeof getFailoverStoreToken()).toBe('symbol');
    expect(getFailoverStoreToken('default')).toBe(getFailoverStoreToken());
    expect(getFailoverStoreToken('reports')).toBe('holdfast:failover:reports:store');
    expect(getFailoverToken(FailoverExecutor, 'reports')).toBe('holdfast:failover:reports:FailoverExecutor');
    expect(failoverJobName('write-behind', undefined)).toBe('holdfast:failover:write-behind');
    expect(failoverJobName('store-probe', 'default')).toBe('holdfast:failover:store-probe');
    expect(failoverJobName('cleanup', 'reports')).toBe('holdfast:failover:reports:cleanup');
  });
});
