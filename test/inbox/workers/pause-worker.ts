/**
 * One inbox node for the type-pause test, by role:
 * - `deliver`: delivers shop:order and shop:refund, reporting each id and type to the parent.
 * - `admin`: delivers nothing; on IPC it pauses or resumes a type ({t:'pause'|'resume', type})
 *   through MessageManagement and accepts messages ({t:'accept', messages}), answering each with
 *   {t:'done', op}.
 * argv: <db> <tablePrefix> <role> [competing|leader] [sqlite file]
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import {
  InboxHandler,
  MessageAcceptor,
  MessageManagement,
  messageTypeLabel,
  type AcceptMessage,
  type InboxMessage,
} from '@holdfast/inbox';
import { inboxWorkerModule, ready, runWorker, send, startWorkerApp, workerDataSource } from './worker-app';

const [db, prefix, role, mode = 'competing', sqliteFile] = process.argv.slice(2);

@Injectable()
class Handlers {
  @InboxHandler({ namespace: 'shop', name: 'order' })
  order(message: InboxMessage): void {
    send({ t: 'delivered', id: message.id, type: messageTypeLabel(message.type) });
  }

  @InboxHandler({ namespace: 'shop', name: 'refund' })
  refund(message: InboxMessage): void {
    send({ t: 'delivered', id: message.id, type: messageTypeLabel(message.type) });
  }
}

type Command =
  | { t: 'pause'; type: string; reason?: string }
  | { t: 'resume'; type: string }
  | { t: 'accept'; messages: AcceptMessage<unknown>[] };

async function main(): Promise<void> {
  const dataSource = await workerDataSource(db, sqliteFile);
  const delivering = role === 'deliver';
  const WorkerModule = inboxWorkerModule(
    dataSource,
    prefix,
    delivering ? mode : 'competing',
    {
      pollInterval: '100ms',
      batchSize: 20,
      deliver: delivering,
      ...(delivering ? {} : { cluster: mode as 'leader' }),
    },
    delivering ? [Handlers] : [],
  );
  const app = await startWorkerApp(WorkerModule, dataSource);
  if (!delivering) {
    const management = app.get(MessageManagement);
    const acceptor = app.get(MessageAcceptor);
    process.on('message', (m: Command) => {
      const op =
        m.t === 'pause'
          ? management.pauseType(m.type, { actor: `worker ${process.pid}`, reason: m.reason })
          : m.t === 'resume'
            ? management.resumeType(m.type, { actor: `worker ${process.pid}` })
            : m.t === 'accept'
              ? acceptor.acceptAll(m.messages)
              : undefined;
      op?.then(
        (result) => send({ t: 'done', op: m.t, result }),
        (error: Error) => send({ t: 'failed', op: m.t, error: error.message }),
      );
    });
  }
  ready();
}

runWorker(main);
