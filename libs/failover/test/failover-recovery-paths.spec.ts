import { Injectable, type INestApplication } from '@nestjs/common';
import { sleep, statement } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import { Failover, FailoverMetrics } from '@holdfast/failover';
import { startFailoverApp } from './support/failover-app';

@Injectable()
class Countries {
  up = true;

  @Failover({ name: 'paths-country', expiry: '1h' })
  async find(code: string): Promise<{ code: string; name: string }> {
    if (!this.up) throw new Error('upstream down');
    return { code, name: 'France' };
  }
}

/**
 * A recovery reads the store synchronously when it can (SQLite with its connection free): it
 * must never read on the shared SQLite connection while another transaction holds it, or it
 * would serve that transaction's uncommitted rows.
 */
describeEachDatabase(
  'Failover recovery beside an open transaction on the same DataSource',
  (ctx) => {
    let app: INestApplication | undefined;
    afterEach(async () => {
      await app?.close();
      app = undefined;
    });

    it('serves the committed row, not a row another transaction changed and then rolled back', async () => {
      app = await startFailoverApp(ctx, { async: false }, { providers: [Countries] });
      const countries = app.get(Countries);
      await countries.find('FR');
      countries.up = false;
      const table = `${ctx.prefix}FAILOVER_STORE`;

      let during: Promise<{ name: string } | null> | undefined;
      await expect(
        ctx.sql.transaction(async (tx) => {
          expect(
            await tx.execute(statement(`UPDATE ${table} SET PAYLOAD = '{"code":"FR","name":"Uncommitted"}'`)),
          ).toBe(1);
          during = countries.find('FR');
          await sleep(50);
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');

      expect((await during)?.name).toBe('France');
      expect((await countries.find('FR'))?.name).toBe('France');
    });

    it('stores a good value outside a transaction that holds the connection, so its rollback keeps the row', async () => {
      app = await startFailoverApp(ctx, { async: false }, { providers: [Countries] });
      const countries = app.get(Countries);

      let during: Promise<{ code: string } | null> | undefined;
      await expect(
        ctx.sql.transaction(async () => {
          during = countries.find('DE');
          await sleep(50);
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');

      expect((await during)?.code).toBe('DE');
      countries.up = false;
      expect((await countries.find('DE'))?.code).toBe('DE');
    });
  },
  { tag: 'paths' },
);

/** An upstream that is not async: it returns or throws synchronously. */
@Injectable()
class SyncCountries {
  up = true;
  calls = 0;

  @Failover({ name: 'paths-sync-country', expiry: '1h' })
  find(code: string): { code: string; name: string } {
    this.calls++;
    if (!this.up) throw new Error('upstream down');
    return { code, name: 'France' };
  }
}

describeEachDatabase(
  'Failover over an upstream that answers synchronously',
  (ctx) => {
    let app: INestApplication | undefined;
    afterEach(async () => {
      await app?.close();
      app = undefined;
    });

    it('stores its value, recovers from its synchronous throw, and always answers with a promise', async () => {
      app = await startFailoverApp(ctx, { async: false }, { providers: [SyncCountries] });
      const countries = app.get(SyncCountries);
      const stored = countries.find('FR') as unknown;
      expect(stored).toBeInstanceOf(Promise);
      expect(await stored).toEqual({ code: 'FR', name: 'France' });

      countries.up = false;
      const recovered = countries.find('FR') as unknown;
      expect(recovered).toBeInstanceOf(Promise);
      expect(await recovered).toEqual({ code: 'FR', name: 'France' });
      const missing = countries.find('DE') as unknown;
      expect(missing).toBeInstanceOf(Promise);
      await expect(missing).rejects.toThrow('upstream down');
      expect(countries.calls).toBe(3);
    });
  },
  { tag: 'paths-sync' },
);

/**
 * With `async: false` a write the store can do at once (SQLite, its connection free) is not
 * awaited through the store's bound, but its failure must count for the store's breaker as a
 * bounded write's does.
 */
describeEachDatabase(
  'Failover with async: false when the store write fails',
  (ctx) => {
    let app: INestApplication | undefined;
    afterEach(async () => {
      await app?.close();
      app = undefined;
    });

    it('returns the value, counts each failure, and skips the store after three in a row', async () => {
      app = await startFailoverApp(ctx, { async: false }, { providers: [Countries] });
      const countries = app.get(Countries);
      const metrics = app.get(FailoverMetrics);
      await ctx.sql.execute(statement(`DROP TABLE ${ctx.prefix}FAILOVER_STORE`));

      for (const code of ['C0', 'C1', 'C2']) expect((await countries.find(code))?.code).toBe(code);
      expect(metrics.storeErrors).toBe(3);
      expect(metrics.storeSkips).toBe(0);
      expect((await countries.find('C3'))?.code).toBe('C3');
      expect(metrics.storeSkips).toBe(1);
      expect(metrics.storeErrors).toBe(3);
    });
  },
  { tag: 'paths-fail' },
);
