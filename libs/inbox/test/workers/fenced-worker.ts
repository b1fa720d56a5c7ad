/**
 * A delivering node for fenced-handler.spec.ts: args db, prefix, sqliteFile ('' for none), mode.
 * {t:'accept', id} accepts a message; the handler reports {t:'started', id, token}, waits for
 * {t:'write'}, then tries a fenced insert into <prefix>FENCE_LOG and reports {t:'wrote'} or
 * {t:'refused', name, code}. {t:'stop'} closes the app.
 */
import { Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  InboxDelivery,
  InboxHandler,
  MessageAcceptor,
  type InboxHandlerContext,
  type InboxMessage,
} from '@holdfast/inbox';
import {
  inboxWorkerModule,
  ready,
  runWorker,
  send,
  startWorkerApp,
  workerDataSource,
} from '../../../../test/inbox/workers/worker-app';

const [db, prefix, sqliteFile, mode] = process.argv.slice(2);
let dataSource: DataSource;

const writeAllowed = new Promise<void>((resolve) =>
  process.on('message', (m: { t?: string }) => {
    if (m?.t === 'write') resolve();
  }),
);

@Injectable()
class FencedHandler {
  @InboxHandler({ namespace: 'test', name: 'order-placed' })
  async handle(message: InboxMessage, context: InboxHandlerContext): Promise<void> {
    send({ t: 'started', id: message.id, token: context.claim.token });
    await writeAllowed;
    const heldBefore = context.claim.held;
    const insert = `INSERT INTO ${prefix}FENCE_LOG (ID, NODE) VALUES (${db === 'postgres' ? '$1, $2' : '?, ?'})`;
    try {
      await context.claim.fenced(dataSource, (manager) => manager.query(insert, [message.id, 'A']));
      send({ t: 'wrote' });
    } catch (error) {
      const e = error as { name?: string; code?: string; message?: string };
      send({ t: 'refused', name: e.name, code: e.code, message: e.message, heldBefore });
    }
  }
}

runWorker(async () => {
  dataSource = await workerDataSource(db, sqliteFile);
  const module = inboxWorkerModule(
    dataSource,
    prefix,
    mode,
    // No handler deadline: the frozen handler is given up only by losing its claim.
    { schema: 'create', pollInterval: '100ms', visibilityTimeout: '2s', handlerTimeout: '10m' },
    [FencedHandler],
  );
  const app = await startWorkerApp(module, dataSource);
  const delivery = app.get(InboxDelivery);
  while (!delivery.isDelivering()) await new Promise((r) => setTimeout(r, 50));
  const acceptor = app.get(MessageAcceptor);
  process.on('message', (m: { t?: string; id?: string }) => {
    if (m?.t === 'accept' && m.id)
      void acceptor.accept({ id: m.id, type: { namespace: 'test', name: 'order-placed' }, payload: {} });
  });
  ready();
});
