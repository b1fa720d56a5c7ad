/**
 * One inbox node for the drain test: handlers that take `handlerMs` each, two groups, and Nest's
 * shutdown hooks so a SIGTERM drains it. Reports each start and finish over IPC.
 * argv: <db> <tablePrefix> <sqlite file or ''> <handlerMs>
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createTestDataSource, type TestDatabase } from '@holdfast/testing';
import { InboxHandler, InboxModule, type InboxMessage } from '@holdfast/inbox';
import { SimbaModule } from '@holdfast/simba';

const [db, prefix, sqliteFile, handlerMs] = process.argv.slice(2);
const send = (message: unknown) => process.send?.(message);

@Injectable()
class Handler {
  @InboxHandler({ namespace: 'drain', name: 'item' })
  async handle(message: InboxMessage): Promise<void> {
    send({ t: 'start', id: message.id, pid: process.pid });
    await new Promise((resolve) => setTimeout(resolve, Number(handlerMs)));
    send({ t: 'done', id: message.id, pid: process.pid });
  }
}

async function main(): Promise<void> {
  const dataSource = await createTestDataSource(db as TestDatabase, {
    poolSize: 4,
    sqliteFile: sqliteFile || undefined,
  });
  const leader = db === 'sqlite';
  @Module({
    imports: [
      InboxModule.forRoot({
        dataSource,
        tablePrefix: prefix,
        schema: 'check',
        pollInterval: '200ms',
        batchSize: 40,
        visibilityTimeout: '60s',
        shutdownGrace: '5s',
        groupBy: (m) => String((m.payload as { g: number }).g),
        cluster: leader ? 'leader' : 'competing',
      }),
      ...(leader
        ? [
            SimbaModule.forRoot({
              dataSource,
              tablePrefix: prefix,
              schema: 'create',
              ttl: '3s',
              transition: '2s',
              standbyPoll: '200ms',
            }),
          ]
        : []),
    ],
    providers: [Handler],
  })
  class WorkerModule {}
  const app = await NestFactory.createApplicationContext(WorkerModule, {
    logger: process.env.DRAIN_DEBUG ? ['error', 'warn', 'log', 'debug'] : ['error', 'warn'],
  });
  app.enableShutdownHooks();
  // What keeps this process alive: the IPC channel (Holdfast's timers never hold a process open;
  // a real app has its HTTP server). On SQLite nothing else would.
  process.on('message', () => undefined);
  process.on('exit', () => void dataSource.destroy().catch(() => undefined));
  send({ t: 'ready', pid: process.pid });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
