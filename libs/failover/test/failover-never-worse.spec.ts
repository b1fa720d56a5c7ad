import { randomBytes } from 'node:crypto';
import { Injectable, Logger, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { toNumber, statement } from '@holdfast/core/kit';
import { describeEachDatabase, type TestDatabaseContext } from '@holdfast/testing';
import {
  Failover,
  FailoverExecutor,
  FailoverMetrics,
  FailoverModule,
  FailoverTenant,
  type FailoverEntry,
  type FailoverModuleOptions,
  type FailoverStore,
  type KeyGenerator,
  type PayloadCipher,
} from '@holdfast/failover';
import { startFailoverApp } from './support/failover-app';

/**
 * Issue #34 §4: `@Failover` never makes a call less available than the plain method. When
 * Holdfast's own part fails (key, key generator, codec, cipher, store), the caller gets the
 * upstream's answer, or the upstream's own error, never Holdfast's.
 */

class UpstreamDown extends Error {
  constructor() {
    super('upstream down');
  }
}

/** A key generator whose backing service is gone: every key() throws. */
@Injectable()
class BrokenKeys implements KeyGenerator {
  key(): string {
    throw new TypeError('key service unavailable');
  }
}

/** A cipher whose HSM is unreachable. */
const brokenCipher: PayloadCipher = {
  id: 'hsm',
  encrypt: () => {
    throw new Error('HSM unreachable');
  },
  decrypt: () => {
    throw new Error('HSM unreachable');
  },
};

function cyclic(): Record<string, unknown> {
  const value: Record<string, unknown> = { id: 'c1' };
  value.self = value;
  return value;
}

@Injectable()
class Quotes {
  up = true;
  calls = 0;
  /** What the upstream answers. */
  value: unknown = { price: 42 };

  private answer(): unknown {
    this.calls++;
    if (!this.up) throw new UpstreamDown();
    return this.value;
  }

  @Failover({ name: 'quote' })
  async quote(_arg: unknown): Promise<unknown> {
    return this.answer();
  }

  @Failover({ name: 'quote-broken-keys', keyGenerator: BrokenKeys })
  async brokenKeys(_id: string): Promise<unknown> {
    return this.answer();
  }
}

/** Every warning logged while `body` runs. */
async function warnings(body: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const spy = jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => {
    seen.push(String(message));
  });
  try {
    await body();
  } finally {
    spy.mockRestore();
  }
  return seen;
}

async function rows(ctx: TestDatabaseContext, name: string): Promise<number> {
  const [row] = await ctx.sql.query<{ n: unknown }>(
    statement(
      `SELECT COUNT(*) AS n FROM ${ctx.prefix}FAILOVER_STORE WHERE FAILOVER_NAME = ${ctx.sql.dialect.placeholder(1)}`,
      [name],
    ),
  );
  return toNumber(row.n);
}

describeEachDatabase('@Failover is never less available than the plain method', (ctx) => {
  let app: INestApplication;
  const start = async (options: Partial<FailoverModuleOptions> = {}) => {
    app = await startFailoverApp(ctx, { async: false, ...options }, { providers: [Quotes] });
    const quotes = app.get(Quotes);
    quotes.up = true;
    return quotes;
  };
  afterEach(async () => {
    await app?.close();
    await ctx.sql.execute(statement(`DELETE FROM ${ctx.prefix}FAILOVER_STORE`)).catch(() => undefined);
  });

  it('an argument that cannot be keyed: the upstream answers, nothing is stored, one warning and a count per call', async () => {
    const quotes = await start();
    const metrics = app.get(FailoverMetrics);
    const logged = await warnings(async () => {
      expect(await quotes.quote(cyclic())).toEqual({ price: 42 });
      expect(await quotes.quote(cyclic())).toEqual({ price: 42 });
    });
    expect(quotes.calls).toBe(2);
    expect(await rows(ctx, 'quote')).toBe(0);
    const keyWarnings = logged.filter((line) => line.includes("'quote'") && /cannot be keyed/.test(line));
    expect(keyWarnings).toHaveLength(1);
    expect(keyWarnings[0]).toMatch(/argument 0/);
    expect(metrics.bypassedCalls).toBe(2);
  });

  it("an argument that cannot be keyed with the upstream down: the upstream's own error", async () => {
    const quotes = await start();
    quotes.up = false;
    await warnings(async () => {
      await expect(quotes.quote(cyclic())).rejects.toBeInstanceOf(UpstreamDown);
    });
    expect(quotes.calls).toBe(1);
  });

  it("a key generator that throws: the upstream's answer when up, its error when down", async () => {
    const quotes = await start();
    const logged = await warnings(async () => {
      expect(await quotes.brokenKeys('FR')).toEqual({ price: 42 });
      quotes.up = false;
      await expect(quotes.brokenKeys('FR')).rejects.toBeInstanceOf(UpstreamDown);
    });
    expect(await rows(ctx, 'quote-broken-keys')).toBe(0);
    expect(logged.filter((line) => line.includes('key service unavailable'))).toHaveLength(1);
  });

  it("a value the codec cannot write (a cycle): returned as it is when up; the upstream's error when down", async () => {
    const quotes = await start();
    const value = cyclic();
    quotes.value = value;
    await warnings(async () => {
      expect(await quotes.quote('FR')).toBe(value);
      quotes.up = false;
      await expect(quotes.quote('FR')).rejects.toBeInstanceOf(UpstreamDown);
    });
    expect(await rows(ctx, 'quote')).toBe(0);
  });

  it("a stored row the codec cannot read: the upstream's answer when up, its error (not Holdfast's) when down", async () => {
    const quotes = await start();
    await quotes.quote('FR');
    await ctx.sql.execute(statement(`UPDATE ${ctx.prefix}FAILOVER_STORE SET PAYLOAD = 'not json'`));
    await warnings(async () => {
      quotes.up = false;
      await expect(quotes.quote('FR')).rejects.toBeInstanceOf(UpstreamDown);
      quotes.up = true;
      expect(await quotes.quote('FR')).toEqual({ price: 42 });
    });
  });

  it("a cipher that throws: the upstream's answer when up (nothing stored), its error when down", async () => {
    const quotes = await start({
      store: {
        type: 'sql',
        dataSource: ctx.dataSource,
        tablePrefix: ctx.prefix,
        schema: 'create',
        encryption: { enabled: true, cipher: brokenCipher },
      },
    });
    await warnings(async () => {
      expect(await quotes.quote('FR')).toEqual({ price: 42 });
      quotes.up = false;
      await expect(quotes.quote('FR')).rejects.toBeInstanceOf(UpstreamDown);
    });
    expect(await rows(ctx, 'quote')).toBe(0);
  });

  it("a row the cipher cannot decrypt (another key): the upstream's error when down, its answer when up", async () => {
    const encrypted = (key: Buffer): Partial<FailoverModuleOptions> => ({
      store: {
        type: 'sql',
        dataSource: ctx.dataSource,
        tablePrefix: ctx.prefix,
        schema: 'create',
        encryption: { enabled: true, key },
      },
    });
    const writer = await start(encrypted(randomBytes(32)));
    await writer.quote('FR');
    await app.close();
    const quotes = await start(encrypted(randomBytes(32)));
    await warnings(async () => {
      quotes.up = false;
      await expect(quotes.quote('FR')).rejects.toBeInstanceOf(UpstreamDown);
      quotes.up = true;
      expect(await quotes.quote('FR')).toEqual({ price: 42 });
    });
  });

  it("a tenant's store that cannot be built (its table missing): the upstream's answer when up, its error when down", async () => {
    // The global table exists; the tenant's does not, and `schema: 'check'` refuses to go on without it.
    await (await startFailoverApp(ctx)).close();
    const quotes = await start({
      store: { type: 'sql', dataSource: ctx.dataSource, tablePrefix: ctx.prefix, schema: 'check' },
      multiTenant: { tenants: { ghost: { tablePrefix: 'GHOST_' } } },
    });
    const logged = await warnings(async () => {
      expect(await FailoverTenant.run('ghost', () => quotes.quote('FR'))).toEqual({ price: 42 });
      quotes.up = false;
      await expect(FailoverTenant.run('ghost', () => quotes.quote('FR'))).rejects.toBeInstanceOf(
        UpstreamDown,
      );
    });
    expect(logged.filter((line) => line.includes("Failover 'quote': store failed"))).toHaveLength(1);
  });
});

/** A store whose every operation throws at once (a broken driver, a bug in a custom store). */
class ExplodingStore implements FailoverStore {
  readonly description = 'exploding';
  private fail(): never {
    throw new Error('store exploded');
  }
  store(_entry: FailoverEntry<unknown>): Promise<void> {
    return this.fail();
  }
  find<T>(): Promise<FailoverEntry<T> | undefined> {
    return this.fail();
  }
  delete(): Promise<void> {
    return this.fail();
  }
  cleanByExpiry(): Promise<number> {
    return this.fail();
  }
}

describe('@Failover with a store that throws', () => {
  it.each([
    ['on the caller path', false],
    ['with write-behind', true],
  ] as const)(
    "answers with the upstream's value when up and its error when down (%s)",
    async (_what, async) => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          FailoverModule.forRoot({
            store: { type: 'custom', useClass: ExplodingStore },
            cleanup: { enabled: false },
            async,
          }),
        ],
        providers: [Quotes],
      }).compile();
      const app = await moduleRef.createNestApplication({ logger: false }).init();
      try {
        const quotes = app.get(Quotes);
        await warnings(async () => {
          expect(await quotes.quote('FR')).toEqual({ price: 42 });
          // The failed write leaves the queue (a pending write would be served, as it should).
          await app.get(FailoverExecutor).flush();
          quotes.up = false;
          await expect(quotes.quote('FR')).rejects.toBeInstanceOf(UpstreamDown);
        });
      } finally {
        await warnings(() => app.close());
      }
    },
  );
});
