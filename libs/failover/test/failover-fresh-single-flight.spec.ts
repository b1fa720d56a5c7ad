import { Injectable, type INestApplication } from '@nestjs/common';
import { describeEachDatabase } from '@holdfast/testing';
import {
  Failover,
  FailoverConfigurationError,
  FailoverExecutor,
  FailoverMetrics,
  ListPayloadSplitter,
  Referential,
  type FailoverOptions,
} from '@holdfast/failover';
import { startFailoverApp } from './support/failover-app';
import { statement } from '@holdfast/core/kit';

/**
 * Issue #47 part 6: a fresh window served without the upstream (refresh-ahead in the
 * background), stale-if-error as before, and single-flight (calls of one key share one upstream
 * attempt, in this process).
 */

class Rate extends Referential {
  pair!: string;
  value!: number;
}

class UpstreamDown extends Error {
  constructor() {
    super('upstream down');
  }
}

/** A promise the test settles by hand. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** The upstream: counts its calls; answers at once, or when the test releases `gate`. */
@Injectable()
class RateUpstream {
  calls = 0;
  up = true;
  value = 1;
  gate?: Promise<void>;

  async fetch(pair: string): Promise<Rate> {
    this.calls++;
    const value = this.value;
    const up = this.up;
    if (this.gate) await this.gate;
    if (!up) throw new UpstreamDown();
    return Object.assign(new Rate(), { pair, value });
  }
}

@Injectable()
class Rates {
  constructor(readonly upstream: RateUpstream) {}

  @Failover({ name: 'rate-plain', type: Rate })
  plain(pair: string): Promise<Rate> {
    return this.upstream.fetch(pair);
  }

  @Failover({ name: 'rate-fresh', type: Rate, fresh: '1h', expiry: '2h' })
  fresh(pair: string): Promise<Rate> {
    return this.upstream.fetch(pair);
  }

  @Failover({ name: 'rate-short', type: Rate, fresh: 100, expiry: '1h' })
  short(pair: string): Promise<Rate> {
    return this.upstream.fetch(pair);
  }

  @Failover({ name: 'rate-ahead', type: Rate, fresh: '1h', refreshAfter: 0, expiry: '2h' })
  ahead(pair: string): Promise<Rate> {
    return this.upstream.fetch(pair);
  }

  @Failover({ name: 'rate-shared', type: Rate, singleFlight: true })
  shared(pair: string): Promise<Rate> {
    return this.upstream.fetch(pair);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeEachDatabase('@Failover fresh window, refresh-ahead and single-flight (#47 part 6)', (ctx) => {
  let app: INestApplication;
  let rates: Rates;
  let upstream: RateUpstream;
  let metrics: FailoverMetrics;

  beforeEach(async () => {
    app = await startFailoverApp(ctx, { async: false }, { providers: [RateUpstream, Rates] });
    rates = app.get(Rates);
    upstream = app.get(RateUpstream);
    metrics = app.get(FailoverMetrics);
  });
  afterEach(async () => {
    await app?.close();
    await ctx.sql.execute(statement(`DELETE FROM ${ctx.prefix}FAILOVER_STORE`)).catch(() => undefined);
  });

  it('inside the fresh window the stored value answers and the upstream is not called', async () => {
    expect(await rates.fresh('EURUSD')).toMatchObject({ pair: 'EURUSD', value: 1 });
    expect(upstream.calls).toBe(1);
    upstream.value = 2;
    for (let i = 0; i < 5; i++) {
      const served = await rates.fresh('EURUSD');
      expect(served).toBeInstanceOf(Rate);
      expect(served).toMatchObject({ pair: 'EURUSD', value: 1, upToDate: true });
    }
    expect(upstream.calls).toBe(1);
    expect(metrics.byFailover.get('rate-fresh')?.outcomes).toMatchObject({ success: 1, fresh: 5 });
    // Another key has nothing stored: its first call is the upstream's.
    expect(await rates.fresh('EURGBP')).toMatchObject({ value: 2 });
    expect(upstream.calls).toBe(2);
  });

  it('past the window the upstream is called again, and its failure is answered from the store (stale-if-error)', async () => {
    await rates.short('EURUSD');
    await sleep(300);
    upstream.value = 2;
    expect(await rates.short('EURUSD')).toMatchObject({ value: 2, upToDate: true });
    expect(upstream.calls).toBe(2);
    await sleep(300);
    upstream.up = false;
    const recovered = await rates.short('EURUSD');
    expect(recovered).toMatchObject({ value: 2, upToDate: false });
    expect(upstream.calls).toBe(3);
    expect(metrics.byFailover.get('rate-short')?.outcomes).toMatchObject({
      success: 2,
      recovered: 1,
      fresh: 0,
    });
  });

  it('refresh-ahead: callers get the stored value at once while one background call per key refreshes it', async () => {
    await rates.ahead('EURUSD');
    expect(upstream.calls).toBe(1);
    const gate = deferred<void>();
    upstream.gate = gate.promise;
    upstream.value = 2;
    const answers = await Promise.all(Array.from({ length: 20 }, () => rates.ahead('EURUSD')));
    // Everyone answered before the refresh finished, with the stored value.
    for (const answer of answers) expect(answer).toMatchObject({ value: 1 });
    expect(upstream.calls).toBe(2);
    gate.resolve();
    upstream.gate = undefined;
    await app.get(FailoverExecutor).flush();
    // Let the refresh's write land (it is the background call's own, outside flush's queue when synchronous).
    for (let i = 0; i < 50 && (await rates.ahead('EURUSD')).value !== 2; i++) await sleep(20);
    expect((await rates.ahead('EURUSD')).value).toBe(2);
  });

  it('a failing background refresh leaves the stored value served, and reaches no caller', async () => {
    await rates.ahead('EURUSD');
    upstream.up = false;
    expect(await rates.ahead('EURUSD')).toMatchObject({ value: 1, upToDate: true });
    expect(await rates.ahead('EURUSD')).toMatchObject({ value: 1, upToDate: true });
  });

  it('single-flight: 100 concurrent calls of one key during an outage share one upstream attempt and each gets the stale value', async () => {
    await rates.shared('EURUSD');
    expect(upstream.calls).toBe(1);
    upstream.up = false;
    const gate = deferred<void>();
    upstream.gate = gate.promise;
    const calls = Array.from({ length: 100 }, () => rates.shared('EURUSD'));
    const other = rates.shared('EURGBP');
    await sleep(20);
    expect(upstream.calls).toBe(3); // one for EURUSD, one for EURGBP
    gate.resolve();
    const answers = await Promise.all(calls);
    for (const answer of answers) expect(answer).toMatchObject({ pair: 'EURUSD', value: 1, upToDate: false });
    await expect(other).rejects.toBeInstanceOf(UpstreamDown);
    expect(metrics.byFailover.get('rate-shared')?.outcomes).toMatchObject({
      success: 1,
      recovered: 100,
      failed: 1,
    });
    // The flight is over: the next call is a new attempt.
    upstream.gate = undefined;
    await rates.shared('EURUSD');
    expect(upstream.calls).toBe(4);
  });

  it('single-flight shares a good answer too; without it every caller calls the upstream', async () => {
    const gate = deferred<void>();
    upstream.gate = gate.promise;
    const shared = Array.from({ length: 10 }, () => rates.shared('EURUSD'));
    const plain = Array.from({ length: 10 }, () => rates.plain('EURUSD'));
    await sleep(20);
    expect(upstream.calls).toBe(11);
    gate.resolve();
    for (const answer of await Promise.all([...shared, ...plain])) expect(answer).toMatchObject({ value: 1 });
  });
});

class RateSplitter extends ListPayloadSplitter<Rate> {
  protected idOf(item: Rate): string {
    return item.pair;
  }
}

describe('@Failover fresh / refreshAfter / singleFlight: bad declarations', () => {
  const declare = (options: Partial<FailoverOptions>) => () => {
    class Target {
      method(): void {}
    }
    const descriptor = Object.getOwnPropertyDescriptor(Target.prototype, 'method')!;
    Failover({ name: 'bad', ...options } as FailoverOptions)(Target.prototype, 'method', descriptor);
  };

  it.each([
    [{ fresh: '2h', expiry: '1h' }, /'fresh' \(7200000 ms\) must not be longer than 'expiry' \(3600000 ms\)/],
    [{ fresh: 0 }, /'fresh' must be a positive duration/],
    [{ fresh: 'soon' }, /fresh/],
    [{ refreshAfter: '1m' }, /'refreshAfter' needs 'fresh'/],
    [
      { fresh: '1m', refreshAfter: '1m' },
      /'refreshAfter' \(60000 ms\) must be less than 'fresh' \(60000 ms\)/,
    ],
    [{ fresh: '1m', payloadSplitter: new RateSplitter() }, /'fresh' cannot be used with a 'payloadSplitter'/],
    [{ singleFlight: 'yes' }, /'singleFlight' must be a boolean, got "yes"/],
  ] as Array<[Record<string, unknown>, RegExp]>)(
    '%j is refused with FailoverConfigurationError',
    (options, message) => {
      expect(declare(options)).toThrow(FailoverConfigurationError);
      expect(declare(options)).toThrow(message);
    },
  );
});
