/**
 * One inbox node for the multi-process test: delivers messages of type bench:item and reports
 * every id it handles to the parent over IPC before the batch is committed (so a SIGKILL right
 * after a report lands in the middle of a batch).
 * argv: <db> <tablePrefix> <visibilityTimeout ms> [competing|leader] [sqlite file] [concurrency]
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createTestDataSource, type TestDatabase } from '@holdfast/core/testing';
import { InboxHandler, InboxModule, type InboxMessage } from '@holdfast/inbox';
import { SimbaModule } from '@holdfast/simba';

const [db, prefix, visibility, mode = 'competing', sqliteFile, concurrency] = process.argv.slice(2);
const send = (message: unknown) => process.send?.(message);

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
  const dataSource = await createTestDataSource(db as TestDatabase, {
    poolSize: 4,
    sqliteFile: sqliteFile || undefined,
  });
  @Module({
    imports: [
      InboxModule.forRoot({
        dataSource,
        tablePrefix: prefix,
        schema: 'check',
        pollInterval: '100ms',
        batchSize: 100,
        ...(concurrency ? { concurrency: Number(concurrency) } : {}),
        visibilityTimeout: Number(visibility),
        cluster: mode as 'competing' | 'leader',
      }),
      // Leader mode: the owner of the Simba mutex delivers; a killed owner is replaced after ttl + transition.
      ...(mode === 'leader'
        ? [
            SimbaModule.forRoot({
              dataSource,
              tablePrefix: prefix,
              schema: 'create',
              ttl: '3s',
              transition: '2s',
            }),
          ]
        : []),
    ],
    providers: [Handler],
  })
  class WorkerModule {}
  const app = await NestFactory.createApplicationContext(WorkerModule, { logger: ['error'] });
  process.on('message', (m: { t?: string }) => {
    if (m?.t === 'stop') {
      void app
        .close()
        .then(() => dataSource.destroy())
        .finally(() => process.exit(0));
    }
  });
  send({ t: 'ready', pid: process.pid });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
