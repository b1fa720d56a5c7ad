import { Injectable } from '@nestjs/common';
import { StoreTimeoutError } from '@holdfast/failover';
import { StoreGuard } from '../src/store/store-guard';
import { HoldfastTimers, sqlClientFor, statement } from '@holdfast/core/kit';
import { createTestDataSource, testDatabases, uniqueTablePrefix, waitUntil } from '@holdfast/testing';
import { Failover, FailoverMetrics } from '@holdfast/failover';
import { startFailoverApp, withAppBehindProxy } from './support/failover-app';

class UpstreamDown extends Error {}

@Injectable()
class Prices {
  up = true;
  @Failover({ name: 'price', expiry: '1h' })
  async price(code: string) {
    if (!this.up) throw new UpstreamDown(`no price for ${code}`);
    return { code, value: 42 };
  }
}

/** Settles `work`, or says it did not within `ms` (a generous ceiling, not a timing assertion). */
async function settles<T>(work: Promise<T>, ms = 15_000): Promise<{ value?: T; error?: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const ceiling = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work.then((value) => ({ value })), ceiling]);
  } catch (error) {
    if ((error as Error).message?.startsWith('still waiting')) throw error;
    return { error };
  } finally {
    clearTimeout(timer);
  }
}

describe('StoreGuard', () => {
  it('bounds a wait and opens after consecutive timeouts', async () => {
    const guard = new StoreGuard(50, 2, 60_000);
    const never = () => new Promise<never>(() => undefined);
    await expect(guard.run('find', never)).rejects.toBeInstanceOf(StoreTimeoutError);
    await expect(guard.run('find', never)).rejects.toBeInstanceOf(StoreTimeoutError);
    expect(guard.open).toBe(true);
    let called = false;
    await expect(
      guard.run('find', async () => {
        called = true;
      }),
    ).rejects.toThrow();
    expect(called).toBe(false);
  });

  it('with a probe, an open breaker closes on the first probe that answers, without a caller trial', async () => {
    const guard = new StoreGuard(50, 1, 60_000);
    const changes: boolean[] = [];
    guard.onChange((open) => changes.push(open));
    let answers = false;
    let probes = 0;
    const timers = new HoldfastTimers();
    guard.probeWith(
      async () => {
        probes++;
        if (!answers) throw new Error('still unreachable');
      },
      timers,
      'probe',
      20,
    );
    try {
      await expect(guard.run('find', () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
      expect(guard.closed).toBe(false);
      await waitUntil(() => probes >= 2, { timeout: 5_000, message: 'failed probes' });
      expect(guard.closed).toBe(false); // a failed probe keeps it open (halfOpenAfter is 60 s)
      answers = true;
      await waitUntil(() => guard.closed, { timeout: 5_000, message: 'the breaker to close' });
      expect(changes).toEqual([true, false]);
      await expect(guard.run('find', async () => 'row')).resolves.toBe('row');
      expect(timers.has('probe')).toBe(false); // no probe while closed
    } finally {
      guard.stop();
    }
  });
});

// An embedded SQLite file has no connection to blackhole: servers only.
const servers = testDatabases().filter((db) => db !== 'sqlite');
const onServers = servers.length ? describe.each(servers) : () => () => undefined;

onServers('store timeout and breaker with a blackholed database [%s]', (db) => {
  const prefix = uniqueTablePrefix('timeout');
  afterAll(async () => {
    const dataSource = await createTestDataSource(db);
    await sqlClientFor(dataSource)
      .execute(statement(`DROP TABLE IF EXISTS ${prefix}FAILOVER_STORE`))
      .catch(() => undefined);
    await dataSource.destroy();
  });

  it('a decorated call never hangs on an unreachable store, whether the upstream is up or down', async () => {
    await withAppBehindProxy(
      { db, prefix },
      (viaProxy) =>
        startFailoverApp(viaProxy, { async: false, storeTimeout: '300ms' }, { providers: [Prices] }),
      async (app, proxy) => {
        const prices = app.get(Prices);
        const metrics = app.get(FailoverMetrics);
        expect((await prices.price('A')).value).toBe(42);
        prices.up = false;
        expect((await prices.price('A')).value).toBe(42); // recovered before the outage
        proxy.blackhole();
        // Upstream down: the recovery read is bounded, the caller gets the original error.
        const down = await settles(prices.price('A'));
        expect(down.error).toBeInstanceOf(UpstreamDown);
        // Upstream up: the synchronous write is bounded, the caller gets the value.
        prices.up = true;
        for (let i = 0; i < 3; i++) expect((await settles(prices.price(`B${i}`))).value?.value).toBe(42);
        // After consecutive failures the store is skipped without waiting at all.
        expect(metrics.storeSkips).toBeGreaterThan(0);
        prices.up = false;
        expect((await settles(prices.price('A'))).error).toBeInstanceOf(UpstreamDown);
        // The store's hung statements destroyed their connections at the bound (#43): the
        // DataSource closes with the path still silent.
      },
    );
  }, 60_000);
});
