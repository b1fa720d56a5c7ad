import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describeEachDatabase } from '@holdfast/testing';
import { createInboxApp, type InboxTestApp } from './inbox-test-app';
import { statement } from '@holdfast/core/kit';

const ORDER = { namespace: 'test', name: 'order-placed' };
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
});

describeEachDatabase(
  'Delivery spans (OpenTelemetry messaging conventions)',
  (ctx) => {
    const apps: InboxTestApp[] = [];
    const table = () => `${ctx.prefix}COR_MESSAGE`;
    afterEach(async () => {
      for (const app of apps.splice(0)) await app.close();
      await ctx.sql.execute(statement(`DELETE FROM ${table()}`));
      exporter.reset();
    });

    it('a process span per attempt; a failed attempt has a retry span inside it, the last one a park span', async () => {
      const node = await createInboxApp(ctx, { retry: { maxRetries: 2, initialDelay: 0, jitter: 0 } });
      apps.push(node);
      node.probe.behaviour = (message) => (message.id === 'bad' ? new Error('boom') : undefined);
      await node.acceptor.acceptAll([
        { id: 'ok', type: ORDER, payload: 1 },
        { id: 'bad', type: ORDER, payload: 2 },
      ]);
      await node.delivery.deliverDue();
      await node.delivery.deliverDue(); // 'bad' again (no delay): its second failure parks it

      const spans = exporter.getFinishedSpans();
      const process = spans.filter((s) => s.name === `process ${table()}`);
      expect(process.map((s) => s.attributes['messaging.message.id']).sort()).toEqual(['bad', 'bad', 'ok']);
      for (const s of process) {
        expect(s.kind).toBe(SpanKind.CONSUMER);
        expect(s.attributes).toMatchObject({
          'messaging.system': 'holdfast_inbox',
          'messaging.operation.type': 'process',
          'messaging.destination.name': table(),
        });
      }
      const ok = process.find((s) => s.attributes['messaging.message.id'] === 'ok')!;
      expect(ok.status.code).not.toBe(SpanStatusCode.ERROR);
      const bad = process.filter((s) => s.attributes['messaging.message.id'] === 'bad');
      expect(bad.map((s) => s.attributes['messaging.holdfast.retries'])).toEqual([0, 1]);
      for (const s of bad) {
        expect(s.status.code).toBe(SpanStatusCode.ERROR);
        expect(s.events.some((e) => e.name === 'exception')).toBe(true);
      }

      const settle = spans.filter((s) => s.attributes['messaging.operation.type'] === 'settle');
      expect(settle.map((s) => s.name)).toEqual([`retry ${table()}`, `park ${table()}`]);
      settle.forEach((s, i) => {
        expect(s.parentSpanContext?.spanId).toBe(bad[i].spanContext().spanId);
        expect(s.spanContext().traceId).toBe(bad[i].spanContext().traceId);
        expect(s.attributes['messaging.message.id']).toBe('bad');
      });
      expect(settle[0].attributes['messaging.holdfast.retry_delay_ms']).toBe(0);
    });
  },
  { tag: 'trace' },
);
