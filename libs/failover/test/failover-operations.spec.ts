import { Injectable, Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  Failover,
  FailoverExecutor,
  FailoverModule,
  ListPayloadSplitter,
  type FailoverModuleOptions,
} from '@holdfast/failover';

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
