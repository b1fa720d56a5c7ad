/**
 * One inbox node that accepts and delivers at the same time, for the concurrency test: accepts
 * about `rate` messages a second (one `accept()` each) for `seconds`, while its competing
 * delivery runs batches of 10 with a 300 ms handler. Reports every handled id, and at the end
 * its accept count, failed accepts (with their errors) and the inbox's SQL retry count.
 * argv: <db> <tablePrefix> <rate per s> <seconds>
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createTestDataSource, type TestDatabase } from '@holdfast/testing';
import { InboxHandler, InboxMetrics, InboxModule, MessageAcceptor, type InboxMessage } from '@holdfast/inbox';

const [db, prefix, rate, seconds] = process.argv.slice(2);
const send = (message: unknown) => process.send?.(message);

@Injectable()
class Handler {
  @InboxHandler({ namespace: 'load', name: 'item' })
  async handle(message: InboxMessage): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 300));
    send({ t: 'handled', id: message.id, pid: process.pid });
  }
}

async function main(): Promise<void> {
  const dataSource = await createTestDataSource(db as TestDatabase, { poolSize: 6 });
  @Module({
    imports: [
      InboxModule.forRoot({
        dataSource,
        tablePrefix: prefix,
        schema: 'check',
        pollInterval: '100ms',
        batchSize: 10,
        cluster: 'competing',
      }),
    ],
    providers: [Handler],
  })
  class WorkerModule {}
  const app = await NestFactory.createApplicationContext(WorkerModule, { logger: ['error', 'warn'] });
  const acceptor = app.get(MessageAcceptor);
  const metrics = app.get(InboxMetrics);
  send({ t: 'ready', pid: process.pid });
  await new Promise<void>((resolve) => process.once('message', () => resolve()));

  let accepted = 0;
  const failures: string[] = [];
  const inFlight: Promise<void>[] = [];
  const end = Date.now() + Number(seconds) * 1000;
  const gap = 1000 / Number(rate);
  for (let i = 0; Date.now() < end; i++) {
    inFlight.push(
      acceptor
        .accept({ id: `${process.pid}-${i}`, type: { namespace: 'load', name: 'item' }, payload: { i } })
        .then(
          (r) => {
            if (r.accepted) accepted++;
          },
          (error: Error) => {
            failures.push(`${error.name}: ${error.message}`);
          },
        ),
    );
    await new Promise((resolve) => setTimeout(resolve, gap * (0.5 + Math.random())));
  }
  await Promise.all(inFlight);
  send({ t: 'accepted', accepted, failures });
  process.on('message', (m: { t?: string }) => {
    if (m?.t !== 'stop') return;
    send({ t: 'stats', retries: metrics.retriedStatements });
    void app
      .close()
      .then(() => dataSource.destroy())
      .finally(() => process.exit(0));
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
