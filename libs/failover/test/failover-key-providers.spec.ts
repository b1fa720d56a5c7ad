import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { InvalidOptionsError } from '@holdfast/core/kit';
import {
  Failover,
  FailoverExecutor,
  FailoverModule,
  InjectiveKeyGenerator,
  type FailoverModuleOptions,
  ListPayloadSplitter,
  type FailoverKeyContext,
  type KeyGenerator,
} from '@holdfast/failover';

@Injectable()
class Region {
  readonly code = 'eu';
}

/** Not registered as a provider: built by Holdfast in the declaring module, with Region injected. */
@Injectable()
class RegionKey implements KeyGenerator {
  static seen: FailoverKeyContext[] = [];
  constructor(private readonly region: Region) {}
  key(args: readonly unknown[], context?: FailoverKeyContext): string {
    if (context) RegionKey.seen.push(context);
    return `${this.region.code}/${String(args[0])}`;
  }
}

/** Registered as a provider by the app: that instance is the one used. */
@Injectable()
class CountingKey implements KeyGenerator {
  calls = 0;
  key(args: readonly unknown[]): string {
    this.calls++;
    return String(args[0]);
  }
}

@Injectable()
class IdPrefix {
  readonly prefix = 'item-';
}

@Injectable()
class ItemSplitter extends ListPayloadSplitter<{ id: string }> {
  constructor(private readonly ids: IdPrefix) {
    super();
  }
  protected idOf(item: { id: string }): string {
    return `${this.ids.prefix}${item.id}`;
  }
}

const upperKey: KeyGenerator = { key: (args) => String(args[0]).toUpperCase() };

@Injectable()
class Catalog {
  up = true;
  upstreamCalls = 0;

  private call<T>(value: T): T {
    this.upstreamCalls++;
    if (!this.up) throw new Error('down');
    return value;
  }

  @Failover({ name: 'by-region', domain: 'regional', keyGenerator: RegionKey })
  async byRegion(code: string) {
    return this.call({ code });
  }

  @Failover({ name: 'counted', keyGenerator: CountingKey })
  async counted(code: string) {
    return this.call({ code });
  }

  @Failover({ name: 'upper', keyGenerator: upperKey })
  async upper(code: string) {
    return this.call({ code });
  }

  @Failover({ name: 'items', payloadSplitter: ItemSplitter })
  async items(ids: string[]) {
    return this.call(ids.map((id) => (id === 'XX' ? null : { id })));
  }

  @Failover({ name: 'item' })
  async item(id: string) {
    return this.call({ id });
  }

  @Failover({ name: 'by-anything' })
  async byAnything(..._args: unknown[]) {
    return this.call({ ok: true });
  }

  @Failover({ name: 'injective', keyGenerator: InjectiveKeyGenerator })
  async injective(..._args: unknown[]) {
    return this.call({ ok: true });
  }
}

@Module({ providers: [Region, IdPrefix, CountingKey, Catalog], exports: [Catalog] })
class CatalogModule {}

async function boot(options: FailoverModuleOptions = {}) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      FailoverModule.forRoot({ cleanup: { enabled: false }, async: false, ...options }),
      CatalogModule,
    ],
  }).compile();
  return moduleRef.createNestApplication({ logger: false }).init();
}

describe('key generators and splitters are Nest providers', () => {
  it('builds a key generator class in the declaring module with its injected dependency, and gives it the failover metadata', async () => {
    const app = await boot();
    try {
      const catalog = app.get(Catalog);
      await catalog.byRegion('FR');
      catalog.up = false;
      expect(await catalog.byRegion('FR')).toEqual({ code: 'FR' });
      expect(RegionKey.seen[0]).toEqual({
        name: 'by-region',
        domain: 'regional',
        effectiveName: 'regional',
        method: 'Catalog.byRegion',
      });
    } finally {
      await app.close();
    }
  });

  it("uses the app's own provider when the class is registered, and an instance as given", async () => {
    const app = await boot();
    try {
      const catalog = app.get(Catalog);
      await catalog.counted('FR');
      expect(app.get(CountingKey).calls).toBe(1);
      await catalog.upper('fr');
      catalog.up = false;
      expect(await catalog.upper('FR')).toEqual({ code: 'fr' });
    } finally {
      await app.close();
    }
  });

  it('builds a splitter class with its injected dependency; items the upstream did not return are not stored, the others are', async () => {
    const app = await boot();
    try {
      const catalog = app.get(Catalog);
      const executor = app.get(FailoverExecutor);
      expect(await catalog.items(['A', 'XX', 'B'])).toEqual([{ id: 'A' }, null, { id: 'B' }]);
      expect(await executor.liveEntryCount('items')).toBe(2);
      catalog.up = false;
      // Slices are keyed through the splitter's injected prefix.
      expect(await catalog.items(['item-A', 'item-B'])).toEqual([{ id: 'A' }, { id: 'B' }]);
    } finally {
      await app.close();
    }
  });

  it('leaves an argument that cannot be keyed to the upstream alone: its answer when up, its error when down (issue #34 §4)', async () => {
    const app = await boot();
    try {
      const catalog = app.get(Catalog);
      const before = catalog.upstreamCalls;
      expect(await catalog.byAnything('a', () => 1)).toEqual({ ok: true });
      expect(catalog.upstreamCalls).toBe(before + 1);
      expect(await app.get(FailoverExecutor).liveEntryCount('by-anything')).toBe(0);
      catalog.up = false;
      await expect(catalog.byAnything('a', () => 1)).rejects.toThrow('down');
      catalog.up = true;
      // Sets no longer share a key: with the upstream down, DE is not answered with FR.
      await catalog.byAnything(new Set(['FR']));
      catalog.up = false;
      expect(await catalog.byAnything(new Set(['FR']))).toMatchObject({ ok: true });
      await expect(catalog.byAnything(new Set(['DE']))).rejects.toThrow('down');
    } finally {
      await app.close();
    }
  });

  it("keys with the Java library's rules by default: ('a:b') and ('a', 'b') share an entry", async () => {
    const app = await boot();
    try {
      const catalog = app.get(Catalog);
      await catalog.byAnything('a:b');
      catalog.up = false;
      expect(await catalog.byAnything('a', 'b')).toMatchObject({ ok: true });
    } finally {
      await app.close();
    }
  });

  it.each([
    ["with keys: 'injective' for the module", { keys: 'injective' } as const, 'byAnything'],
    ['with keyGenerator: InjectiveKeyGenerator on the failover', {}, 'injective'],
  ] as const)("keeps ('a:b') and ('a', 'b') apart %s", async (_what, options, method) => {
    const app = await boot(options);
    try {
      const catalog = app.get(Catalog);
      const call = (...args: unknown[]) =>
        (catalog[method] as (...a: unknown[]) => Promise<unknown>)(...args);
      await call('a:b');
      catalog.up = false;
      expect(await call('a:b')).toMatchObject({ ok: true });
      await expect(call('a', 'b')).rejects.toThrow('down');
    } finally {
      await app.close();
    }
  });

  it("stops bootstrap on an unknown 'keys' option, naming it", async () => {
    const error = await boot({ keys: 'json' as never }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect((error as Error).message).toMatch(/option 'keys' = "json"/);
  });
});
