/**
 * One delivering inbox node for the NOTIFY test: pollInterval 60 s, so only a notification can
 * make it deliver early. Reports 'ready' once its listener hears, and each handled id with the
 * milliseconds since its delivery loop started (its first poll is due at 60,000).
 * argv: <tablePrefix>; HOLDFAST_TEST_PG_DIRECT_URL (set behind PgBouncer) is its notifyListenUrl.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createTestDataSource, waitUntil } from '@holdfast/testing';
import { InboxHandler, InboxModule, type InboxMessage } from '@holdfast/inbox';
import { InboxNotifyListener } from '@holdfast/inbox/internal';

const [prefix] = process.argv.slice(2);
const send = (message: unknown) => process.send?.(message);
let started = 0;

@Injectable()
class Handler {
  @InboxHandler({ namespace: 'notify', name: 'item' })
  async handle(message: InboxMessage): Promise<void> {
    send({ t: 'handled', id: message.id, sinceStart: performance.now() - started });
  }
}

async function main(): Promise<void> {
  const dataSource = await createTestDataSource('postgres', { poolSize: 4 });
  @Module({
    imports: [
      InboxModule.forRoot({
        dataSource,
        tablePrefix: prefix,
        schema: 'check',
        pollInterval: '60s',
        wakeOnAccept: true,
        cluster: 'competing',
        notifyListenUrl: process.env.HOLDFAST_TEST_PG_DIRECT_URL || undefined,
      }),
    ],
    providers: [Handler],
  })
  class WorkerModule {}
  started = performance.now();
  const app = await NestFactory.createApplicationContext(WorkerModule, { logger: ['error', 'warn'] });
  const listener = app.get(InboxNotifyListener);
  await waitUntil(() => listener.listening, { timeout: 20_000, message: 'the LISTEN connection' });
  send({ t: 'ready', sinceStart: performance.now() - started });
  process.on('message', (m: { t?: string }) => {
    if (m?.t !== 'stop') return;
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
