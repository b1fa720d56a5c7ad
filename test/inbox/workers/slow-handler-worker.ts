/**
 * One inbox node whose handler runs far longer than the visibility timeout: it reports the
 * start and the end of every call to the parent over IPC.
 * argv: <db> <tablePrefix> <visibilityTimeout ms> <handler ms> [competing|leader] [sqlite file]
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { InboxHandler, type InboxMessage } from '@holdfast/inbox';
import { inboxWorkerModule, ready, runWorker, send, startWorkerApp, workerDataSource } from './worker-app';

const [db, prefix, visibility, handlerMs, mode = 'competing', sqliteFile] = process.argv.slice(2);

@Injectable()
class Handler {
  @InboxHandler({ namespace: 'slow', name: 'item' })
  async handle(message: InboxMessage): Promise<void> {
    send({ t: 'started', id: message.id, pid: process.pid });
    await new Promise((resolve) => setTimeout(resolve, Number(handlerMs)));
    send({ t: 'finished', id: message.id, pid: process.pid });
  }
}

async function main(): Promise<void> {
  const dataSource = await workerDataSource(db, sqliteFile);
  const WorkerModule = inboxWorkerModule(
    dataSource,
    prefix,
    mode,
    {
      pollInterval: '100ms',
      visibilityTimeout: Number(visibility),
      // Slow handlers are expected: no limit per call, the heartbeats keep the claims.
      handlerTimeout: 0,
    },
    [Handler],
  );
  await startWorkerApp(WorkerModule, dataSource);
  ready();
}

runWorker(main);
