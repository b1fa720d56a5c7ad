/**
 * An accept-only node with its own tracing SDK, for accept-traces.spec.ts: args db, prefix,
 * sqliteFile ('' for none), mode. {t:'accept', id} accepts a message with `traceContext: true`
 * and reports {t:'accepted', id, traceId, spanId} of its `send` span; {t:'stop'} closes the app.
 */
import { propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { MessageAcceptor } from '@holdfast/inbox';
import {
  inboxWorkerModule,
  ready,
  runWorker,
  send,
  startWorkerApp,
  workerDataSource,
} from '../../../../test/inbox/workers/worker-app';

const [db, prefix, sqliteFile, mode] = process.argv.slice(2);

runWorker(async () => {
  const exporter = new InMemorySpanExporter();
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const dataSource = await workerDataSource(db, sqliteFile);
  const module = inboxWorkerModule(dataSource, prefix, mode, { deliver: false, traceContext: true }, []);
  const app = await startWorkerApp(module, dataSource);
  const acceptor = app.get(MessageAcceptor);
  process.on('message', (m: { t?: string; id?: string }) => {
    if (m?.t !== 'accept' || !m.id) return;
    const id = m.id;
    void acceptor.accept({ id, type: { namespace: 'test', name: 'order-placed' }, payload: {} }).then(() => {
      const span = exporter.getFinishedSpans().find((s) => s.attributes['messaging.message.id'] === id)!;
      send({ t: 'accepted', id, traceId: span.spanContext().traceId, spanId: span.spanContext().spanId });
    });
  });
  ready();
});
