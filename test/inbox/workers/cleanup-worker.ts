/**
 * One inbox node for the once-per-cluster cleanup test: cleans expired messages every second and
 * reports to the parent over IPC each cleanup pass that deleted rows (from its own log line) and,
 * every 250 ms, its tick counters (InboxMetrics.cleanupTicks / cleanupSkips).
 * argv: <db> <tablePrefix> <competing|leader> [sqlite file]
 */
import 'reflect-metadata';
import { Injectable, type LoggerService } from '@nestjs/common';
import { InboxHandler, InboxMetrics, type InboxMessage } from '@holdfast/inbox';
import { inboxWorkerModule, ready, runWorker, send, startWorkerApp, workerDataSource } from './worker-app';

const [db, prefix, mode, sqliteFile] = process.argv.slice(2);

@Injectable()
class Handler {
  @InboxHandler({ namespace: 'cleanup', name: 'item' })
  async handle(_message: InboxMessage): Promise<void> {}
}

/** Forwards the cleanup's "Deleted N expired message(s)" lines; errors go to stderr. */
class ReportingLogger implements LoggerService {
  log(message: unknown): void {
    const deleted = /^Deleted (\d+) expired message/.exec(String(message));
    if (deleted) send({ t: 'cleaned', pid: process.pid, rows: Number(deleted[1]) });
  }
  error(message: unknown): void {
    console.error(message);
  }
  warn(): void {}
}

async function main(): Promise<void> {
  const dataSource = await workerDataSource(db, sqliteFile);
  const WorkerModule = inboxWorkerModule(
    dataSource,
    prefix,
    mode,
    {
      pollInterval: '200ms',
      cleanupInterval: '1s',
      cleanupChunkSize: 50,
    },
    [Handler],
    { standbyPoll: '200ms' },
  );
  const app = await startWorkerApp(WorkerModule, dataSource, {
    logger: new ReportingLogger(),
    onStop: () => clearInterval(report),
  });
  const metrics = app.get(InboxMetrics);
  const report = setInterval(
    () => send({ t: 'ticks', pid: process.pid, ran: metrics.cleanupTicks, skipped: metrics.cleanupSkips }),
    250,
  );
  ready();
}

runWorker(main);
