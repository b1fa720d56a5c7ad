import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
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
  // As an SDK registers one: without a context manager no span is ever the active one.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
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

    it("runs the handler inside its attempt's span: the spans the handler starts are its children", async () => {
      const node = await createInboxApp(ctx);
      apps.push(node);
      node.probe.behaviour = async () => {
        // A span of the handler's own, after an await (the context survives it).
        await new Promise((resolve) => setImmediate(resolve));
        trace.getTracer('handler').startSpan('handler work').end();
      };
      await node.acceptor.accept({ id: 'inside', type: ORDER, payload: 1 });
      await node.delivery.deliverDue();

      const spans = exporter.getFinishedSpans();
      const process = spans.find((s) => s.name === `process ${table()}`)!;
      const work = spans.find((s) => s.name === 'handler work')!;
      expect(work.parentSpanContext?.spanId).toBe(process.spanContext().spanId);
      expect(work.spanContext().traceId).toBe(process.spanContext().traceId);
      // Nothing of the delivery leaks out: the caller's context has no span afterwards.
      expect(trace.getActiveSpan()).toBeUndefined();
    });
  },
  { tag: 'trace' },
);
