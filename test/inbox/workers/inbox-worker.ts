/**
 * One inbox node for the multi-process test: delivers messages of type bench:item and reports
 * every id it handles to the parent over IPC before the batch is committed (so a SIGKILL right
 * after a report lands in the middle of a batch).
 * argv: <db> <tablePrefix> <visibilityTimeout ms> [competing|leader] [sqlite file] [concurrency]
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { InboxHandler, type InboxMessage } from '@holdfast/inbox';
import { inboxWorkerModule, ready, runWorker, send, startWorkerApp, workerDataSource } from './worker-app';

const [db, prefix, visibility, mode = 'competing', sqliteFile, concurrency] = process.argv.slice(2);

@Injectable()
class Handler {
  @InboxHandler({ namespace: 'crash', name: 'item' })
  async handle(message: InboxMessage): Promise<void> {
    send({ t: 'delivered', id: message.id, pid: process.pid });
    // Keep each batch open a little so the parent's SIGKILL hits it mid-way.
    await new Promise((resolve) => setTimeout(resolve, 20));
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
      batchSize: 100,
      ...(concurrency ? { concurrency: Number(concurrency) } : {}),
      visibilityTimeout: Number(visibility),
    },
    [Handler],
  );
  await startWorkerApp(WorkerModule, dataSource);
  ready();
}

runWorker(main);
