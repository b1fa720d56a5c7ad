import { Injectable, Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ClsModule, ClsService } from 'nestjs-cls';
import {
  Failover,
  FailoverExecutor,
  FailoverMetrics,
  FailoverModule,
  ListPayloadSplitter,
  type FailoverModuleOptions,
} from '@holdfast/failover';
import { statement } from '@holdfast/core/kit';

class Item {
  id!: string;
}

class BrokenSplitter extends ListPayloadSplitter<Item> {
  protected idOf(): string {
    throw new Error('no id here');
  }
}

@Injectable()
class Catalog {
  up = true;
  @Failover({ name: 'items', domain: 'catalog', expiry: '1h', payloadSplitter: BrokenSplitter, type: [Item] })
  async items(ids: string[]): Promise<Item[]> {
    if (!this.up) throw new Error('down');
    return ids.map((id) => ({ id }));
  }

  @Failover({ name: 'item', domain: 'catalog', expiry: '5m' })
  async item(id: string): Promise<Item> {
    if (!this.up) throw new Error('down');
    return { id };
  }

  @Failover({ name: 'everything', recoverAll: true })
  async everything(): Promise<Item[]> {
    return [];
  }
}

async function withApp(
  options: FailoverModuleOptions,
  run: (app: Awaited<ReturnType<typeof boot>>, logs: string[]) => Promise<void>,
) {
  const logs: string[] = [];
  const spies = (['log', 'warn', 'error'] as const).map((level) =>
    jest.spyOn(Logger.prototype, level).mockImplementation((...args: any[]) => {
      logs.push(`${level}: ${String(args[0])}`);
    }),
  );
  const app = await boot(options);
  try {
    await run(app, logs);
  } finally {
    await app.close();
    spies.forEach((s) => s.mockRestore());
  }
}

async function boot(options: FailoverModuleOptions) {
  const moduleRef = await Test.createTestingModule({
    imports: [FailoverModule.forRoot({ cleanup: { enabled: false }, ...options })],
    providers: [Catalog],
  }).compile();
  return moduleRef.createNestApplication().init();
}

describe('failover operations', () => {
  const env = process.env.NODE_ENV;
  afterEach(() => {
    process.env.NODE_ENV = env;
  });

  it('logs a summary line per failover and warns about risky set-ups', async () => {
    process.env.NODE_ENV = 'production';
    await withApp({}, async (_app, logs) => {
      expect(logs).toContainEqual(
        expect.stringMatching(
          /Failover 'items' on Catalog.items: domain=catalog expiry=3600000ms store=memory async=write-behind splitter=BrokenSplitter/,
        ),
      );
      expect(logs).toContainEqual(expect.stringMatching(/warn: .*in memory \(not durable\)/));
      expect(logs).toContainEqual(
        expect.stringMatching(
          /warn: Failovers of domain 'catalog' have different expiries \(3600000, 300000 ms\)/,
        ),
      );
      expect(logs).toContainEqual(
        expect.stringMatching(
          /warn: Failover 'everything': recoverAll has no effect without a payloadSplitter/,
        ),
      );
    });
  });

  it('a throwing splitter is reported with its name, the operation and the failover; the call still returns', async () => {
    await withApp({}, async (app, logs) => {
      expect(await app.get(Catalog).items(['a'])).toEqual([{ id: 'a' }]);
      expect(logs).toContainEqual(
        expect.stringMatching(
          /error: Payload splitter BrokenSplitter.splitOnStore failed for failover 'items': no id here/,
        ),
      );
    });
  });

  it('counts live entries of a failover with one query', async () => {
    await withApp({}, async (app) => {
      const catalog = app.get(Catalog);
      await catalog.item('x');
      await catalog.item('y');
      await app.get(FailoverExecutor).flush();
      expect(await app.get(FailoverExecutor).liveEntryCount('item')).toBe(2);
      await expect(app.get(FailoverExecutor).liveEntryCount('nope')).rejects.toThrow(
        /No failover named 'nope'/,
      );
    });
  });

  it.each<[string, FailoverModuleOptions, RegExp]>([
    [
      'a bad rejection policy',
      { async: { rejection: 'panic' as never } },
      /option 'async.rejection' = "panic"/,
    ],
    ['a zero queue', { async: { maxQueue: 0 } }, /option 'async.maxQueue' = 0/],
    ['a bad async value', { async: 'yes' as never }, /option 'async' = "yes"/],
    ['a bad scatter timeout', { scatter: { timeout: 'soon' } }, /option 'scatter.timeout' = "soon"/],
    [
      'a bad breaker',
      { execution: { circuitBreaker: { consecutiveFailures: 0 } } },
      /option 'execution.circuitBreaker.consecutiveFailures' = 0/,
    ],
    [
      'a bad tenant prefix',
      { multiTenant: { tenants: { acme: { tablePrefix: 'ac me' } } } },
      /option 'multiTenant.tenants.acme.tablePrefix' = "ac me"/,
    ],
    [
      'no tenants',
      { multiTenant: { tenants: {} } },
      /option 'multiTenant.tenants' must list at least one tenant/,
    ],
  ])('stops bootstrap on %s', async (_what, options, message) => {
    await expect(boot(options)).rejects.toThrow(message);
  });
});

describe('write-behind rejection policies and tenants through nestjs-cls', () => {
  @Injectable()
  class Quotes {
    up = true;
    @Failover({ name: 'quote' })
    async quote(id: string): Promise<{ id: string }> {
      if (!this.up) throw new Error('down');
      return { id };
    }
  }

  async function bootQuotes(options: FailoverModuleOptions, imports: any[] = []) {
    const moduleRef = await Test.createTestingModule({
      imports: [...imports, FailoverModule.forRoot({ cleanup: { enabled: false }, ...options })],
      providers: [Quotes],
    }).compile();
    return moduleRef.createNestApplication({ logger: false }).init();
  }

  it("'drop-new' keeps what is queued and drops the newcomers", async () => {
    const app = await bootQuotes({
      async: { maxQueue: 3, maxBatch: 100, flushInterval: 60_000, rejection: 'drop-new' },
    });
    try {
      const quotes = app.get(Quotes);
      for (const id of ['a', 'b', 'c', 'd', 'e']) await quotes.quote(id);
      expect(app.get(FailoverMetrics).droppedWrites).toBe(2);
      await app.get(FailoverExecutor).flush();
      quotes.up = false;
      expect(await quotes.quote('a')).toEqual({ id: 'a' });
      await expect(quotes.quote('e')).rejects.toThrow('down');
    } finally {
      await app.close();
    }
  });

  it("'caller-runs' writes on the caller's path when the queue is full, losing nothing", async () => {
    const app = await bootQuotes({
      async: { maxQueue: 2, maxBatch: 100, flushInterval: 60_000, rejection: 'caller-runs' },
    });
    try {
      const quotes = app.get(Quotes);
      for (const id of ['a', 'b', 'c', 'd']) await quotes.quote(id);
      expect(app.get(FailoverMetrics).droppedWrites).toBe(0);
      quotes.up = false;
      for (const id of ['a', 'b', 'c', 'd']) expect(await quotes.quote(id)).toEqual({ id });
    } finally {
      await app.close();
    }
  });

  it('reads the tenant from nestjs-cls with multiTenant.clsKey', async () => {
    const app = await bootQuotes(
      {
        multiTenant: {
          tenants: { acme: { tablePrefix: 'acme_' }, globex: { tablePrefix: 'globex_' } },
          clsKey: 'tenantId',
        },
      },
      [ClsModule.forRoot({ global: true })],
    );
    try {
      const cls = app.get(ClsService);
      const quotes = app.get(Quotes);
      const as = <T>(tenant: string, work: () => Promise<T>) =>
        cls.run(() => {
          cls.set('tenantId', tenant);
          return work();
        });
      await as('acme', () => quotes.quote('x'));
      await app.get(FailoverExecutor).flush();
      quotes.up = false;
      expect(await as('acme', () => quotes.quote('x'))).toEqual({ id: 'x' });
      await expect(as('globex', () => quotes.quote('x'))).rejects.toThrow('down');
      await expect(quotes.quote('x')).rejects.toThrow(/No tenant for this call/);
    } finally {
      await app.close();
    }
  });

  it('a custom cipher is used for every payload', async () => {
    const { EncryptingPayloadColumnResolver, SqlFailoverStore } = await import('@holdfast/failover/internal');
    const { sqlClientFor } = await import('@holdfast/core/kit');
    const { createTestDataSource, uniqueTablePrefix } = await import('@holdfast/testing');
    const reversing = {
      id: 'rev',
      encrypt: (plain: Buffer) => Buffer.from(plain).reverse(),
      decrypt: (data: Buffer) => Buffer.from(data).reverse(),
    };
    const dataSource = await createTestDataSource('sqlite');
    try {
      const sql = sqlClientFor(dataSource);
      const store = await new SqlFailoverStore({
        sql,
        tablePrefix: uniqueTablePrefix('cipher'),
        schema: 'create',
        rows: { payloadColumn: new EncryptingPayloadColumnResolver(reversing) },
      }).init();
      await store.store({
        name: 'n',
        key: 'k',
        asOf: new Date(),
        expireOn: new Date(Date.now() + 60_000),
        payload: { secret: 'plain' },
      });
      const [row] = await sql.query<{ p: string }>(statement(`SELECT PAYLOAD AS p FROM ${store.tableName}`));
      expect(row.p.startsWith('ENC(rev:')).toBe(true);
      expect((await store.find('n', 'k'))?.payload).toEqual({ secret: 'plain' });
    } finally {
      await dataSource.destroy();
    }
  });
});
