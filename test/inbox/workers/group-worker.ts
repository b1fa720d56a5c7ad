/**
 * One inbox node for the strict-order-per-group test: `groupBy` over the payload's group, 20% of
 * first attempts fail (chosen by the message's index), each handler takes a few ms. It reports
 * every start and every success (with the time, in epoch ms with sub-ms precision) to the parent
 * over IPC before the handler returns, so a SIGKILL can land between a report and the delete.
 * argv: <db> <tablePrefix> <visibilityTimeout ms> <competing|leader> [sqlite file]
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { InboxHandler, type InboxMessage } from '@holdfast/inbox';
import { inboxWorkerModule, ready, runWorker, send, startWorkerApp, workerDataSource } from './worker-app';

const [db, prefix, visibility, mode = 'competing', sqliteFile] = process.argv.slice(2);
const now = () => performance.timeOrigin + performance.now();

export interface GroupPayload {
  g: string;
  /** Position in its group's acceptance order. */
  k: number;
  /** Position in the whole acceptance order. */
  i: number;
}

@Injectable()
class Handler {
  @InboxHandler({ namespace: 'group', name: 'item' })
  async handle(message: InboxMessage<GroupPayload>): Promise<void> {
    const { g, k, i } = message.payload;
    send({ t: 'start', id: message.id, g, k, pid: process.pid, at: now() });
    await new Promise((resolve) => setTimeout(resolve, 3 + (i % 5)));
    if (message.retries === 0 && i % 5 === 2) {
      send({ t: 'failed', id: message.id, g, k, pid: process.pid, at: now() });
      throw new Error(`first attempt of ${message.id} fails`);
    }
    send({ t: 'done', id: message.id, g, k, pid: process.pid, at: now() });
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
      batchSize: 20,
      concurrency: 10,
      visibilityTimeout: Number(visibility),
      retry: { initialDelay: '50ms', maxDelay: '200ms' },
      groupBy: (m) => (m.payload as GroupPayload).g,
    },
    [Handler],
  );
  await startWorkerApp(WorkerModule, dataSource);
  ready();
}

runWorker(main);
