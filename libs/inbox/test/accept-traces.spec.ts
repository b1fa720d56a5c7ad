import { statement } from '@holdfast/core/kit';
import { propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { join } from 'node:path';
import { describeEachDatabase, forkTs, waitForExit, waitForMessage } from '@holdfast/testing';
import { CorMessageTraceContext1764000000410 } from '../../../migrations/1764000000410-cor-message-trace-context';
import { InboxTransactionError, TraceContextColumnMissingError } from '../src';
import { createInboxApp, type InboxTestApp } from './inbox-test-app';
import { seedCorMessageDdl } from './seed-ddl';

const ORDER = { namespace: 'test', name: 'order-placed' };
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
  // What NodeSDK registers by default: W3C traceparent / tracestate.
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  propagation.disable();
});

describeEachDatabase(
  'Accept spans and the accepting context carried to the delivery',
  (ctx) => {
    const apps: InboxTestApp[] = [];
    const table = () => `${ctx.prefix}COR_MESSAGE`;
    const spans = (name: string) =>
      exporter.getFinishedSpans().filter((s) => s.name === `${name} ${table()}`);
    const processOf = (id: string) =>
      spans('process').filter((s) => s.attributes['messaging.message.id'] === id);
    const start = async (options: Parameters<typeof createInboxApp>[1]) => {
      const app = await createInboxApp(ctx, options);
      apps.push(app);
      return app;
    };

    beforeEach(async () => {
      // Each test makes the table it needs: with TRACE_CONTEXT, without, or the seed's.
      await ctx.sql.execute(statement(`DROP TABLE IF EXISTS ${table()}`));
    });
    afterEach(async () => {
      for (const app of apps.splice(0)) await app.close();
      exporter.reset();
    });

    /** The parent and the links of a delivery span point at `send`. */
    const expectCarried = (process: ReadableSpan, send: ReadableSpan) => {
      expect(process.spanContext().traceId).toBe(send.spanContext().traceId);
      expect(process.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
      expect(process.links.map((l) => l.context.spanId)).toEqual([send.spanContext().spanId]);
    };

    it('accept, acceptAll and an accept in the caller transaction are send spans (PRODUCER, messaging conventions)', async () => {
      const node = await start({ deliver: false });
      await node.acceptor.accept({ id: 'one', type: ORDER, payload: 1 });
      await node.acceptor.acceptAll([
        { id: 'a', type: ORDER, payload: 1 },
        { id: 'b', type: ORDER, payload: 2 },
      ]);
      await ctx.dataSource.transaction((manager) =>
        node.acceptor.accept({ id: 'tx', type: ORDER, payload: 3 }, { manager }),
      );
      const send = spans('send');
      expect(send).toHaveLength(3);
      for (const s of send) {
        expect(s.kind).toBe(SpanKind.PRODUCER);
        expect(s.attributes).toMatchObject({
          'messaging.system': 'holdfast_inbox',
          'messaging.operation.type': 'send',
          'messaging.operation.name': 'send',
          'messaging.destination.name': table(),
        });
      }
      expect(send.map((s) => s.attributes['messaging.message.id'])).toEqual(['one', undefined, 'tx']);
      expect(send[1].attributes['messaging.batch.message_count']).toBe(2);
      // A call that fails: its span says so.
      await expect(
        node.acceptor.accept({ id: 'bad-tx', type: ORDER, payload: 0 }, { manager: {} as never }),
      ).rejects.toThrow(InboxTransactionError);
      const [failed] = spans('send').filter((s) => s.attributes['messaging.message.id'] === 'bad-tx');
      expect(failed.status.code).toBe(SpanStatusCode.ERROR);
      expect(failed.events.map((e) => e.name)).toEqual(['exception']);
      // traceContext off (the default): nothing is created or written.
      const columns = await ctx.sql.query(statement(`SELECT * FROM ${table()} WHERE ID = 'one'`));
      expect(Object.keys(columns[0] as object).map((c) => c.toUpperCase())).not.toContain('TRACE_CONTEXT');
    });

    it('traceContext: true stores the context with the message; its delivery on another node is a child of the send span and links to it, retries too', async () => {
      const acceptor = await start({ deliver: false, traceContext: true });
      await acceptor.acceptor.accept({ id: 'single', type: ORDER, payload: 1 });
      await acceptor.acceptor.acceptAll([
        { id: 'x', type: ORDER, payload: 2 },
        { id: 'y', type: ORDER, payload: 3 },
      ]);
      await ctx.dataSource.transaction((manager) =>
        acceptor.acceptor.accept({ id: 'in-tx', type: ORDER, payload: 4 }, { manager }),
      );
      const [single, batch, inTx] = spans('send');
      const stored = await ctx.sql.query<{ id: string; tc: string }>(
        statement(`SELECT ID AS id, TRACE_CONTEXT AS tc FROM ${table()} ORDER BY ID`),
      );
      const traceparent = (s: ReadableSpan) => `00-${s.spanContext().traceId}-${s.spanContext().spanId}-01`;
      expect(Object.fromEntries(stored.map((r) => [r.id, JSON.parse(r.tc)]))).toEqual({
        single: { traceparent: traceparent(single) },
        x: { traceparent: traceparent(batch) },
        y: { traceparent: traceparent(batch) },
        'in-tx': { traceparent: traceparent(inTx) },
      });

      // Delivered by another application (its own inbox, the rows read back from the database).
      const deliverer = await start({
        traceContext: true,
        retry: { maxRetries: 3, initialDelay: 0, jitter: 0 },
      });
      let failedOnce = false;
      deliverer.probe.behaviour = (m) => {
        if (m.id !== 'x' || failedOnce) return undefined;
        failedOnce = true;
        return new Error('first attempt fails');
      };
      await deliverer.delivery.deliverDue();
      await deliverer.delivery.deliverDue(); // 'x' again
      expect(deliverer.probe.calls.map((m) => m.id).sort()).toEqual(['in-tx', 'single', 'x', 'x', 'y']);
      expectCarried(processOf('single')[0], single);
      expectCarried(processOf('in-tx')[0], inTx);
      expectCarried(processOf('y')[0], batch);
      const x = processOf('x');
      expect(x).toHaveLength(2);
      for (const attempt of x) expectCarried(attempt, batch);
    });

    it('with groupBy and in chunks the context is stored with every message too', async () => {
      const node = await start({ traceContext: true, groupBy: () => 'g', acceptChunkSize: 2 });
      await node.acceptor.acceptAll([1, 2, 3].map((n) => ({ id: `g${n}`, type: ORDER, payload: n })));
      await node.acceptor.accept({ id: 'g4', type: ORDER, payload: 4 });
      const [batch, single] = spans('send');
      for (let round = 0; round < 4 && node.probe.calls.length < 4; round++) await node.delivery.deliverDue();
      expect(node.probe.calls.map((m) => m.id)).toEqual(['g1', 'g2', 'g3', 'g4']);
      for (const id of ['g1', 'g2', 'g3']) expectCarried(processOf(id)[0], batch);
      expectCarried(processOf('g4')[0], single);
    });

    it('across processes: a message accepted in another process (its own SDK) is delivered here as a child of its send span', async () => {
      const mode = ctx.db === 'sqlite' ? 'leader' : 'competing';
      const deliverer = await start({ traceContext: true, cluster: mode });
      const sqliteFile = ctx.db === 'sqlite' ? String(ctx.dataSource.options.database) : '';
      const child = forkTs(join(__dirname, 'workers/traced-acceptor.ts'), [
        ctx.db,
        ctx.prefix,
        sqliteFile,
        mode,
      ]);
      try {
        await waitForMessage(child, (m: { t?: string }) => m.t === 'ready', 60_000);
        const accepted = waitForMessage<{ t: string; traceId: string; spanId: string }>(
          child,
          (m) => m.t === 'accepted',
          30_000,
        );
        child.send({ t: 'accept', id: 'remote' });
        const send = await accepted;
        await deliverer.delivery.deliverDue();
        expect(deliverer.probe.calls.map((m) => m.id)).toEqual(['remote']);
        const [delivered] = processOf('remote');
        expect(delivered.spanContext().traceId).toBe(send.traceId);
        expect(delivered.parentSpanContext?.spanId).toBe(send.spanId);
        expect(delivered.links.map((l) => l.context.spanId)).toEqual([send.spanId]);
      } finally {
        child.send({ t: 'stop' });
        await waitForExit(child, 30_000);
      }
    });

    it("the seed's table: 'when-present' delivers without the context and no error; true stops startup naming the column and the migration, which adds it", async () => {
      for (const ddl of seedCorMessageDdl(ctx.db, ctx.prefix)) await ctx.sql.execute(statement(ddl));
      const fallback = await start({ traceContext: 'when-present' });
      await fallback.acceptor.accept({ id: 'plain', type: ORDER, payload: 1 });
      await fallback.delivery.deliverDue();
      expect(fallback.probe.calls.map((m) => m.id)).toEqual(['plain']);
      expect(spans('send')).toHaveLength(1);
      const [plain] = processOf('plain');
      expect(plain.parentSpanContext).toBeUndefined();
      expect(plain.links).toEqual([]);
      await fallback.close();
      apps.splice(0);

      const refused = createInboxApp(ctx, { traceContext: true });
      await expect(refused).rejects.toBeInstanceOf(TraceContextColumnMissingError);
      await expect(refused).rejects.toThrow(/TRACE_CONTEXT.*1764000000410-cor-message-trace-context/);

      const runner = ctx.dataSource.createQueryRunner();
      const migration = new (class extends CorMessageTraceContext1764000000410 {
        protected override get prefix(): string {
          return ctx.prefix;
        }
      })();
      try {
        await migration.up(runner);
        await migration.up(runner); // idempotent
      } finally {
        await runner.release();
      }
      const carried = await start({ traceContext: true });
      await carried.acceptor.accept({ id: 'traced', type: ORDER, payload: 2 });
      await carried.delivery.deliverDue();
      expectCarried(processOf('traced')[0], spans('send').at(-1)!);
    });
  },
  {
    tag: 'accept_trace',
    tables: ['COR_MESSAGE', 'HOLDFAST_INBOX_GROUP', 'HOLDFAST_INBOX_LEASE', 'SIMBA_MUTEX'],
  },
);
