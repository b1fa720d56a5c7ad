import { Injectable, type INestApplication } from '@nestjs/common';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describeEachDatabase } from '@holdfast/testing';
import { Failover, Referential } from '@holdfast/failover';
import { startFailoverApp } from './support/failover-app';
import { statement } from '@holdfast/core/kit';

/** Issue #47 part 4 (failover): one span per @Failover call, saying whether the answer is stale. */

class Quote extends Referential {
  symbol!: string;
  price!: number;
}

class UpstreamDown extends Error {
  constructor() {
    super('quotes down');
  }
}

@Injectable()
class Quotes {
  up = true;
  gate?: Promise<void>;

  private async answer(symbol: string): Promise<Quote> {
    const up = this.up;
    if (this.gate) await this.gate;
    if (!up) throw new UpstreamDown();
    return Object.assign(new Quote(), { symbol, price: 10 });
  }

  @Failover({ name: 'quote', type: Quote })
  quote(symbol: string): Promise<Quote> {
    return this.answer(symbol);
  }

  @Failover({ name: 'quote-fresh', type: Quote, fresh: '1h', expiry: '2h' })
  fresh(symbol: string): Promise<Quote> {
    return this.answer(symbol);
  }

  @Failover({ name: 'quote-shared', type: Quote, singleFlight: true })
  shared(symbol: string): Promise<Quote> {
    return this.answer(symbol);
  }
}

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  trace.disable();
  await provider.shutdown();
});

/** The spans ended so far, by name, as attribute records. */
function spans(name: string) {
  return exporter
    .getFinishedSpans()
    .filter((span) => span.name === `failover ${name}`)
    .map((span) => ({ attributes: { ...span.attributes }, status: span.status.code, events: span.events }));
}

describeEachDatabase('@Failover spans (#47 part 4)', (ctx) => {
  let app: INestApplication;
  let quotes: Quotes;

  beforeEach(async () => {
    exporter.reset();
    app = await startFailoverApp(ctx, { async: false }, { providers: [Quotes] });
    quotes = app.get(Quotes);
  });
  afterEach(async () => {
    await app?.close();
    await ctx.sql.execute(statement(`DELETE FROM ${ctx.prefix}FAILOVER_STORE`)).catch(() => undefined);
  });

  it('a call answered by the upstream: one span, fresh (stale = false)', async () => {
    await quotes.quote('ACME');
    expect(spans('quote')).toEqual([
      {
        attributes: {
          'holdfast.failover.name': 'quote',
          'holdfast.failover.outcome': 'success',
          'holdfast.failover.stale': false,
        },
        status: SpanStatusCode.UNSET,
        events: [],
      },
    ]);
  });

  it('a call answered from the store after the upstream failed: stale = true', async () => {
    await quotes.quote('ACME');
    quotes.up = false;
    expect(await quotes.quote('ACME')).toMatchObject({ upToDate: false });
    expect(spans('quote').map((s) => s.attributes)).toEqual([
      expect.objectContaining({ 'holdfast.failover.outcome': 'success', 'holdfast.failover.stale': false }),
      expect.objectContaining({ 'holdfast.failover.outcome': 'recovered', 'holdfast.failover.stale': true }),
    ]);
  });

  it('nothing to serve: the span carries the upstream error, outcome failed, no stale attribute', async () => {
    quotes.up = false;
    await expect(quotes.quote('NONE')).rejects.toBeInstanceOf(UpstreamDown);
    const [span] = spans('quote');
    expect(span.attributes).toEqual({
      'holdfast.failover.name': 'quote',
      'holdfast.failover.outcome': 'failed',
    });
    expect(span.status).toBe(SpanStatusCode.ERROR);
    expect(span.events.map((e) => e.name)).toEqual(['exception']);
  });

  it('a value served inside the fresh window: outcome fresh, stale = false', async () => {
    await quotes.fresh('ACME');
    await quotes.fresh('ACME');
    expect(spans('quote-fresh').map((s) => s.attributes['holdfast.failover.outcome'])).toEqual([
      'success',
      'fresh',
    ]);
    expect(spans('quote-fresh').map((s) => s.attributes['holdfast.failover.stale'])).toEqual([false, false]);
  });

  it("callers that shared another call's attempt (single-flight) are marked shared", async () => {
    await quotes.shared('ACME');
    exporter.reset();
    quotes.up = false;
    let open!: () => void;
    quotes.gate = new Promise<void>((resolve) => (open = resolve));
    const calls = [quotes.shared('ACME'), quotes.shared('ACME'), quotes.shared('ACME')];
    await new Promise((resolve) => setTimeout(resolve, 20));
    open();
    await Promise.all(calls);
    const attributes = spans('quote-shared').map((s) => s.attributes);
    expect(attributes).toHaveLength(3);
    for (const a of attributes)
      expect(a).toMatchObject({ 'holdfast.failover.outcome': 'recovered', 'holdfast.failover.stale': true });
    expect(attributes.filter((a) => a['holdfast.failover.shared'] === true)).toHaveLength(2);
  });
});
