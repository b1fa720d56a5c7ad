/**
 * One inbox node whose handler runs far longer than the visibility timeout: it reports the
 * start and the end of every call to the parent over IPC.
 * argv: <db> <tablePrefix> <visibilityTimeout ms> <handler ms> [competing|leader] [sqlite file]
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { InboxHandler, InboxModule, type InboxMessage } from '@holdfast/inbox';
import { leaderSimba, ready, runWorker, send, startWorkerApp, workerDataSource } from './worker-app';

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
  @Module({
    imports: [
      InboxModule.forRoot({
        dataSource,
        tablePrefix: prefix,
        schema: 'check',
        pollInterval: '100ms',
        visibilityTimeout: Number(visibility),
        // Slow handlers are expected: no limit per call, the heartbeats keep the claims.
        handlerTimeout: 0,
        cluster: mode as 'competing' | 'leader',
      }),
      ...leaderSimba(dataSource, prefix, mode),
    ],
    providers: [Handler],
  })
  class WorkerModule {}
  await startWorkerApp(WorkerModule, dataSource);
  ready();
}

runWorker(main);
