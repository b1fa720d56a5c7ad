import { Injectable, Logger, type INestApplication } from '@nestjs/common';
import { describeEachDatabase } from '@holdfast/testing';
import {
  Failover,
  type FailoverEntry,
  type FailoverModuleOptions,
  type FailoverRowValues,
} from '@holdfast/failover';
import { SqlFailoverStore } from '@holdfast/failover/internal';
import { startFailoverApp } from './support/failover-app';
import { statement } from '@holdfast/core/kit';

/** Issue #34 §3: the seed's failover options that Holdfast handled differently or left untested. */

class UpstreamDown extends Error {
  constructor() {
    super('upstream down');
  }
}

async function captureWarnings(body: () => Promise<void>): Promise<string[]> {
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

describeEachDatabase('the seed’s failover options', (ctx) => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await ctx.sql.execute(statement(`DELETE FROM ${ctx.prefix}FAILOVER_STORE`)).catch(() => undefined);
  });
  const names = async (): Promise<string[]> =>
    (
      await ctx.sql.query<{ n: string }>(
        statement(`SELECT DISTINCT FAILOVER_NAME AS n FROM ${ctx.prefix}FAILOVER_STORE ORDER BY n`),
      )
    ).map((row) => row.n);

  it('a blank domain means the name, as in the seed (FAILOVER_NAME is the name; entries are shared with that domain)', async () => {
    // Declared here so that a declaration refused at decoration time fails this test alone.
    @Injectable()
    class Rates {
      up = true;
      private answer(value: number) {
        if (!this.up) throw new UpstreamDown();
        return { value };
      }
      @Failover({ name: 'rate', domain: '' })
      async rate(_pair: string) {
        return this.answer(1.1);
      }
      @Failover({ name: 'spot', domain: '   ' })
      async spot(_pair: string) {
        return this.answer(1.2);
      }
      /** Another failover of domain 'rate': reads what `rate` stored. */
      @Failover({ name: 'rate-reader', domain: 'rate' })
      async reader(_pair: string) {
        return this.answer(9);
      }
    }
    app = await startFailoverApp(ctx, { async: false }, { providers: [Rates] });
    const rates = app.get(Rates);
    await rates.rate('EURUSD');
    await rates.spot('EURUSD');
    expect(await names()).toEqual(['rate', 'spot']);
    rates.up = false;
    expect(await rates.reader('EURUSD')).toMatchObject({ value: 1.1 });
    expect(await rates.spot('EURUSD')).toMatchObject({ value: 1.2 });
  });

  describe('allowedPayloadClasses (a row a Java service wrote under its own class name)', () => {
    @Injectable()
    class Quotes {
      up = true;
      @Failover({ name: 'quote' })
      async quote(_id: string): Promise<unknown> {
        if (!this.up) throw new UpstreamDown();
        return { price: 42 };
      }
      @Failover({ name: 'plain' })
      async plain(_id: string): Promise<unknown> {
        if (!this.up) throw new UpstreamDown();
        return { price: 7 };
      }
    }

    /** Stores both values, then renames `quote`'s PAYLOAD_CLASS to the Java class name. */
    async function storedByJava(
      allowlist: Partial<{ allowedPayloadClasses: string[]; strictAllowlist: boolean }>,
    ) {
      const options: Partial<FailoverModuleOptions> = {
        async: false,
        store: {
          type: 'sql',
          dataSource: ctx.dataSource,
          tablePrefix: ctx.prefix,
          schema: 'create',
          ...allowlist,
        },
      };
      app = await startFailoverApp(ctx, options, { providers: [Quotes] });
      const quotes = app.get(Quotes);
      await quotes.quote('Q1');
      await quotes.plain('P1');
      await ctx.sql.execute(
        statement(
          `UPDATE ${ctx.prefix}FAILOVER_STORE SET PAYLOAD_CLASS = 'com.acme.Quote' WHERE FAILOVER_NAME = 'quote'`,
        ),
      );
      quotes.up = false;
      return quotes;
    }

    it('recovers a listed class name as its JSON', async () => {
      const quotes = await storedByJava({ allowedPayloadClasses: ['com.acme.Quote'] });
      expect(await quotes.quote('Q1')).toMatchObject({ price: 42 });
      expect(await quotes.plain('P1')).toMatchObject({ price: 7 });
    });

    it('recovers a class of a listed package, as the seed does (a prefix ending at a dot)', async () => {
      const quotes = await storedByJava({ allowedPayloadClasses: ['com.acme'] });
      expect(await quotes.quote('Q1')).toMatchObject({ price: 42 });
      await app!.close();
      await ctx.sql.execute(statement(`DELETE FROM ${ctx.prefix}FAILOVER_STORE`));
      const others = await storedByJava({ allowedPayloadClasses: ['com.acm'] });
      await captureWarnings(async () => {
        await expect(others.quote('Q1')).rejects.toBeInstanceOf(UpstreamDown);
      });
    });

    it("refuses a class name not listed: the caller gets the upstream's error, and the refusal is logged", async () => {
      const quotes = await storedByJava({});
      const warnings = await captureWarnings(async () => {
        await expect(quotes.quote('Q1')).rejects.toBeInstanceOf(UpstreamDown);
      });
      expect(warnings.some((w) => w.includes('"com.acme.Quote" is not allowed'))).toBe(true);
      expect(await quotes.plain('P1')).toMatchObject({ price: 7 });
    });

    it('with strictAllowlist, plain JSON shapes need listing too', async () => {
      const quotes = await storedByJava({ allowedPayloadClasses: ['com.acme.Quote'], strictAllowlist: true });
      expect(await quotes.quote('Q1')).toMatchObject({ price: 42 });
      await captureWarnings(async () => {
        await expect(quotes.plain('P1')).rejects.toBeInstanceOf(UpstreamDown);
      });
    });
  });

  it('logs a lost race of the INSERT-then-UPDATE write at warn, as the seed does, and keeps the other writer’s row', async () => {
    const entry = (payload: unknown): FailoverEntry<unknown> => {
      const asOf = new Date();
      return { name: 'raced', key: 'k1', asOf, expireOn: new Date(asOf.getTime() + 3_600_000), payload };
    };
    const competitor = await new SqlFailoverStore({
      sql: ctx.sql,
      tablePrefix: ctx.prefix,
      schema: 'create',
      rows: { nativeUpsert: false },
    }).init();
    /**
     * Between this store's failed INSERT and its UPDATE, the expiry cleanup removes the row, and
     * between the UPDATE (which then finds nothing) and the re-INSERT another instance writes it.
     */
    class RacedStore extends SqlFailoverStore {
      protected override async update(row: FailoverRowValues): Promise<number> {
        await competitor.delete('raced', 'k1');
        const updated = await super.update(row);
        await competitor.store(entry({ from: 'competitor' }));
        return updated;
      }
    }
    const store = await new RacedStore({
      sql: ctx.sql,
      tablePrefix: ctx.prefix,
      schema: 'create',
      rows: { nativeUpsert: false },
    }).init();
    await competitor.store(entry({ from: 'first' }));
    const warnings = await captureWarnings(() => store.store(entry({ from: 'raced' })));
    expect(warnings.filter((w) => /raced\/k1 lost a race/.test(w))).toHaveLength(1);
    expect((await store.find('raced', 'k1'))?.payload).toEqual({ from: 'competitor' });
  });
});
