import { Injectable, Logger, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { toNumber, statement } from '@holdfast/core/kit';
import { describeEachDatabase, type TestDatabaseContext } from '@holdfast/testing';
import {
  Failover,
  FailoverConfigurationError,
  FailoverMetrics,
  FailoverModule,
  FailoverPayload,
  type FailoverModuleOptions,
} from '@holdfast/failover';
import { startFailoverApp } from './support/failover-app';

class Widget {
  constructor(readonly id = 'w1') {}
}

class Gadget {
  id = 'g1';
  describe() {
    return `gadget ${this.id}`;
  }
}

@FailoverPayload('billing.Invoice')
class Invoice {
  number = 'INV-1';
  total() {
    return 42;
  }
}

// Two classes that share the name "Country" (as two modules of an app would).
const GeoCountry = (() =>
  class Country {
    code = 'FR';
    kind() {
      return 'geo';
    }
  })();
const SalesCountry = (() =>
  class Country {
    code = 'FR';
    kind() {
      return 'sales';
    }
  })();

@Injectable()
class Catalog {
  up = true;
  private call<T>(make: () => T): T {
    if (!this.up) throw new Error('down');
    return make();
  }

  @Failover({ name: 'widget' })
  async widget(id: string) {
    return this.call(() => new Widget(id));
  }

  @Failover({ name: 'widgets' })
  async widgets(id: string) {
    return this.call(() => [new Widget(id)]);
  }

  @Failover({ name: 'gadget' })
  async gadget(_id: string) {
    return this.call(() => new Gadget());
  }

  @Failover({ name: 'invoice' })
  async invoice(_id: string) {
    return this.call(() => new Invoice());
  }

  @Failover({ name: 'geo' })
  async geo(_id: string) {
    return this.call(() => new GeoCountry());
  }

  @Failover({ name: 'sales' })
  async sales(_id: string) {
    return this.call(() => new SalesCountry());
  }

  @Failover({ name: 'plain' })
  async plain(_id: string) {
    return this.call(() => ({ at: new Date('2026-01-01T00:00:00Z'), list: [1, 2] }));
  }
}

const types: FailoverModuleOptions['types'] = [
  Gadget,
  { name: 'geo.Country', type: GeoCountry },
  { name: 'sales.Country', type: SalesCountry },
];

function checks(start: () => Promise<INestApplication>, rows?: (name: string) => Promise<number>) {
  let errors: string[];
  let spy: jest.SpyInstance;
  beforeEach(() => {
    errors = [];
    spy = jest.spyOn(Logger.prototype, 'error').mockImplementation((message: unknown) => {
      errors.push(String(message));
    });
  });
  afterEach(() => spy.mockRestore());

  it('refuses an instance of an unknown class at the first store, once loudly, and still returns the value', async () => {
    const app = await start();
    try {
      const catalog = app.get(Catalog);
      const metrics = app.get(FailoverMetrics);
      expect(await catalog.widget('a')).toBeInstanceOf(Widget);
      expect(await catalog.widget('b')).toBeInstanceOf(Widget);
      expect(await catalog.widgets('c')).toEqual([new Widget('c')]);
      expect(metrics.refusedPayloads).toBe(3);
      const refused = errors.filter((e) => e.includes('class Widget'));
      expect(refused).toHaveLength(2); // once for 'widget', once for 'widgets'
      expect(refused[0]).toMatch(/Failover 'widget'.*not stored.*types: \[Widget\].*@FailoverPayload/);
      if (rows) expect(await rows('widget')).toBe(0);
      catalog.up = false;
      await expect(catalog.widget('a')).rejects.toThrow('down');
      await expect(catalog.widgets('c')).rejects.toThrow('down');
    } finally {
      await app.close();
    }
  });

  it('stores and rebuilds classes known from types, @FailoverPayload() and plain JSON values', async () => {
    const app = await start();
    try {
      const catalog = app.get(Catalog);
      await catalog.gadget('x');
      await catalog.invoice('x');
      await catalog.geo('x');
      await catalog.sales('x');
      await catalog.plain('x');
      catalog.up = false;
      const gadget = await catalog.gadget('x');
      expect(gadget).toBeInstanceOf(Gadget);
      expect(gadget.describe()).toBe('gadget g1');
      expect((await catalog.invoice('x')).total()).toBe(42);
      // Same class name, qualified apart: each comes back as its own class.
      expect((await catalog.geo('x')).kind()).toBe('geo');
      expect((await catalog.sales('x')).kind()).toBe('sales');
      expect(await catalog.plain('x')).toEqual({ at: new Date('2026-01-01T00:00:00Z'), list: [1, 2] });
      expect(app.get(FailoverMetrics).refusedPayloads).toBe(0);
    } finally {
      await app.close();
    }
  });
}

describe('payload classes on the memory store', () => {
  checks(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [FailoverModule.forRoot({ cleanup: { enabled: false }, async: false, types })],
      providers: [Catalog],
    }).compile();
    return moduleRef.createNestApplication({ logger: false }).init();
  });

  it('stops the bootstrap when two payload classes share a name', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [FailoverModule.forRoot({ cleanup: { enabled: false }, types: [GeoCountry, SalesCountry] })],
      providers: [Catalog],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await expect(app.init()).rejects.toThrow(FailoverConfigurationError);
    await expect(app.init()).rejects.toThrow(/Two different payload classes are registered as 'Country'/);
    await app.close();
  });
});

describeEachDatabase(
  'payload classes on the SQL store',
  (ctx: TestDatabaseContext) => {
    const rows = async (name: string) => {
      const [row] = await ctx.sql.query<{ n: unknown }>(
        statement(
          `SELECT COUNT(*) AS n FROM ${ctx.prefix}FAILOVER_STORE WHERE FAILOVER_NAME = ?`.replace(
            '?',
            ctx.sql.dialect.placeholder(1),
          ),
          [name],
        ),
      );
      return toNumber(row.n);
    };
    checks(() => startFailoverApp(ctx, { async: false, types }, { providers: [Catalog] }), rows);

    it('writes the qualified name into PAYLOAD_CLASS', async () => {
      const app = await startFailoverApp(ctx, { async: false, types }, { providers: [Catalog] });
      try {
        await app.get(Catalog).invoice('q');
        await app.get(Catalog).sales('q');
        const found = await ctx.sql.query<{ c: string }>(
          statement(
            `SELECT DISTINCT FAILOVER_NAME AS n, PAYLOAD_CLASS AS c FROM ${ctx.prefix}FAILOVER_STORE WHERE FAILOVER_NAME IN ('invoice', 'sales') ORDER BY n`,
          ),
        );
        expect(found.map((r) => r.c)).toEqual(['billing.Invoice', 'sales.Country']);
      } finally {
        await app.close();
      }
    });
  },
  { tables: ['FAILOVER_STORE'], tag: 'payload' },
);
