/**
 * One inbox node whose handler runs far longer than the visibility timeout: it reports the
 * start and the end of every call to the parent over IPC.
 * argv: <db> <tablePrefix> <visibilityTimeout ms> <handler ms> [competing|leader] [sqlite file]
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createTestDataSource, type TestDatabase } from '@holdfast/core/testing';
import { InboxHandler, InboxModule, type InboxMessage } from '@holdfast/inbox';
import { SimbaModule } from '@holdfast/simba';

const [db, prefix, visibility, handlerMs, mode = 'competing', sqliteFile] = process.argv.slice(2);
const send = (message: unknown) => process.send?.(message);

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
  const dataSource = await createTestDataSource(db as TestDatabase, { poolSize: 4, sqliteFile });
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
