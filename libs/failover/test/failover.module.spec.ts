import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import {
  DatabaseResolver,
  InvalidOptionsError,
  UnsupportedDialectError,
  sqlClientFor,
} from '@holdfast/core/kit';
import { createTestDataSource, uniqueTablePrefix } from '@holdfast/testing';
import {
  Failover,
  FailoverConfigurationError,
  FailoverExecutor,
  FailoverModule,
  getFailoverStoreToken,
  type FailoverModuleOptions,
} from '@holdfast/failover';
import { FailoverRegistry, MemoryFailoverStore, SqlFailoverStore } from '@holdfast/failover/internal';

@Injectable()
class Flaky {
  up = true;
  @Failover({ name: 'flaky' })
  async get(id: string) {
    if (!this.up) throw new Error('down');
    return { id };
  }
}

async function bootstrap(options: FailoverModuleOptions, providers: unknown[] = [Flaky]) {
  const moduleRef = await Test.createTestingModule({
    imports: [FailoverModule.forRoot({ cleanup: { enabled: false }, ...options })],
    providers: providers as never[],
  }).compile();
  return moduleRef.createNestApplication({ logger: false }).init();
}

describe('FailoverModule', () => {
  it('defaults to the memory store and recovers from it', async () => {
    const app = await bootstrap({});
    try {
      expect(app.get(getFailoverStoreToken())).toBeInstanceOf(MemoryFailoverStore);
      const flaky = app.get(Flaky);
      await flaky.get('a');
      await app.get(FailoverExecutor).flush();
      flaky.up = false;
      expect(await flaky.get('a')).toEqual({ id: 'a' });
      expect(
        app
          .get(FailoverRegistry)
          .list()
          .map((f) => f.metadata.name),
      ).toEqual(['flaky']);
    } finally {
      await app.close();
    }
  });

  it.each<[string, FailoverModuleOptions, RegExp]>([
    ['an unknown store type', { store: { type: 'redis' } as never }, /option 'store.type' = "redis"/],
    [
      'a bad table prefix',
      { store: { type: 'sql', tablePrefix: 'x;DROP TABLE y;--' } },
      /option 'store.tablePrefix' = "x;DROP TABLE y;--"/,
    ],
    [
      'a bad exception policy',
      { exceptionPolicy: 'sometimes' as never },
      /option 'exceptionPolicy' = "sometimes"/,
    ],
    ['a bad cron', { cleanup: { cron: 'every hour' } }, /option 'cleanup.cron' = "every hour"/],
    ['a zero memory bound', { store: { type: 'memory', maxEntries: 0 } }, /option 'store.maxEntries' = 0/],
    ['a custom store without a class', { store: { type: 'custom' } }, /useClass/],
    [
      'an unknown dialect override',
      { store: { type: 'sql', dialect: 'db2' as never } },
      /option 'store.dialect' = "db2"/,
    ],
  ])('stops bootstrap on %s, naming the option and value', async (_what, options, message) => {
    const error = await bootstrap(options).catch((e) => e);
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect(error.message).toMatch(message);
  });

  it('fails bootstrap on two failovers with the same name', async () => {
    @Injectable()
    class Twin {
      @Failover({ name: 'flaky' })
      async other() {
        return 1;
      }
    }
    const error = await bootstrap({}, [Flaky, Twin]).catch((e) => e);
    expect(error).toBeInstanceOf(FailoverConfigurationError);
    expect(error.message).toMatch(/Duplicate failover name 'flaky': declared on Flaky.get and on Twin.other/);
  });

  it('fails bootstrap when FailoverModule is not imported', async () => {
    const error = await Test.createTestingModule({ providers: [Flaky] })
      .compile()
      .catch((e) => e);
    expect(String(error?.message)).toMatch(/FailoverExecutor/);
  });

  it('rejects bad declarations when the class is defined', () => {
    const declare = (options: object) => () => {
      class Bad {
        @Failover(options as never)
        async m() {
          return 1;
        }
      }
      return Bad;
    };
    expect(declare({ name: '' })).toThrow(FailoverConfigurationError);
    expect(declare({ name: 'x'.repeat(51) })).toThrow(/longer than 50 characters/);
    expect(declare({ name: 'ok', expiry: 'forever' })).toThrow(/Invalid duration for 'expiry': "forever"/);
    // A blank domain means the name (issue #34 §3); a domain that is not a string, or too long, is refused.
    expect(declare({ name: 'ok', domain: 42 })).toThrow(/'domain'/);
    expect(declare({ name: 'ok', domain: 'd'.repeat(51) })).toThrow(/'domain'/);
    expect(declare({ name: 'ok', type: 'Country' })).toThrow(/'type' must be a class/);
  });

  it('takes a Java binary class name as javaClass and refuses anything else, naming the value', () => {
    const declare = (javaClass: unknown) => () => {
      class Named {
        @Failover({ name: 'named', javaClass } as never)
        async m() {
          return 1;
        }
      }
      return Named;
    };
    for (const good of [
      'com.acme.Country',
      'com.acme.Rates$Quote',
      'java.util.ArrayList',
      '[Lcom.acme.Country;',
      '[J',
    ])
      expect(declare(good)).not.toThrow();
    for (const bad of [
      '',
      'com.acme.',
      'List<Country>',
      'Country[]',
      'com acme',
      42,
      `a.${'b'.repeat(256)}`,
    ]) {
      expect(declare(bad)).toThrow(FailoverConfigurationError);
      expect(declare(bad)).toThrow(/'javaClass' must be a Java binary class name/);
    }
    expect(declare('Country[]')).toThrow(/got "Country\[\]"/);
  });

  it('a decorated instance created with `new` says what is wrong', async () => {
    await expect(new Flaky().get('x')).rejects.toThrow(
      /was not created by Nest with FailoverModule imported/,
    );
  });

  describe('forRootAsync variants', () => {
    @Injectable()
    class OptionsFactory {
      create(): FailoverModuleOptions {
        return { store: { type: 'memory', maxEntries: 5 }, cleanup: { enabled: false } };
      }
    }
    @Module({ providers: [OptionsFactory], exports: [OptionsFactory] })
    class OptionsModule {}

    it.each([
      [
        'useFactory',
        FailoverModule.forRootAsync({
          useFactory: () => ({ store: { type: 'memory' }, cleanup: { enabled: false } }),
        }),
      ],
      [
        'useFactory + inject',
        FailoverModule.forRootAsync({
          imports: [OptionsModule],
          inject: [OptionsFactory],
          useFactory: (f: OptionsFactory) => f.create(),
        }),
      ],
      ['useClass', FailoverModule.forRootAsync({ useClass: OptionsFactory })],
      ['useExisting', FailoverModule.forRootAsync({ imports: [OptionsModule], useExisting: OptionsFactory })],
    ])('%s', async (_name, dynamicModule) => {
      const moduleRef = await Test.createTestingModule({
        imports: [dynamicModule],
        providers: [Flaky],
      }).compile();
      const app = await moduleRef.createNestApplication({ logger: false }).init();
      try {
        expect(app.get(getFailoverStoreToken())).toBeInstanceOf(MemoryFailoverStore);
        expect(await app.get(Flaky).get('z')).toEqual({ id: 'z' });
      } finally {
        await app.close();
      }
    });
  });

  it('bounds the memory store (least recently used entries go first)', async () => {
    const store = new MemoryFailoverStore(3);
    for (const k of ['a', 'b', 'c', 'd']) {
      await store.store({
        name: 'n',
        key: k,
        asOf: new Date(),
        expireOn: new Date(Date.now() + 1000),
        payload: k,
      });
    }
    expect(store.size).toBe(3);
    expect(await store.find('n', 'a')).toBeUndefined();
    expect((await store.find('n', 'd'))?.payload).toBe('d');
  });

  it('uses the portable INSERT/UPDATE statements when the dialect cannot be detected', async () => {
    class NoIdea extends DatabaseResolver {
      override resolve(dataSource: DataSource): never {
        throw new UnsupportedDialectError(String(dataSource.options.type), 'test');
      }
    }
    const dataSource = await createTestDataSource('sqlite');
    const prefix = uniqueTablePrefix('unknown');
    await new SqlFailoverStore({
      sql: sqlClientFor(dataSource),
      tablePrefix: prefix,
      schema: 'create',
    }).init();
    const app = await bootstrap({
      store: { type: 'sql', dataSource, tablePrefix: prefix, schema: 'create', databaseResolver: NoIdea },
    });
    try {
      const store = app.get<SqlFailoverStore>(getFailoverStoreToken());
      expect(store.usesNativeUpsert).toBe(false);
      const flaky = app.get(Flaky);
      await flaky.get('1');
      await flaky.get('1');
      await app.get(FailoverExecutor).flush();
      flaky.up = false;
      expect(await flaky.get('1')).toMatchObject({ id: '1' });
    } finally {
      await app.close();
      await dataSource.destroy();
    }
  });
});
