/**
 * A `lease-database` locker instance for the lossy-failover test (#36): LockerModule on the
 * database HOLDFAST_TEST_PG_URL names. While it believes it is master it appends a tick
 * "<epoch ms> <pid> <epoch ms its term began>" to the tick file every 20 ms.
 * argv: <tablePrefix> <tick file> <lockAcquireSleepInterval ms> <lockKeepAlivePeriod ms>
 * IPC out: {type:'ready', instanceId} (its lease holder id), {type:'acquired', at} and {type:'lost', reason, at} (epoch ms).
 */
import 'reflect-metadata';
import { appendFileSync } from 'node:fs';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createTestDataSource } from '@holdfast/testing';
import {
  LockerModule,
  LockerService,
  OnLockAcquired,
  OnLockLost,
  type LockLostEvent,
} from '@holdfast/locker';

const [prefix, ticks, interval, keepAlive] = process.argv.slice(2);
const send = (message: object) => {
  if (process.connected) process.send?.(message);
};

@Injectable()
class Reporter {
  @OnLockAcquired()
  acquired(): void {
    send({ type: 'acquired', at: Date.now() });
  }

  @OnLockLost()
  lost(event: LockLostEvent): void {
    send({ type: 'lost', reason: event.reason, at: Date.now() });
  }
}

async function main(): Promise<void> {
  const dataSource = await createTestDataSource('postgres', { poolSize: 2 });
  @Module({
    imports: [
      LockerModule.forRoot({
        dataSource,
        tablePrefix: prefix,
        schema: 'create',
        locker: { type: 'lease-database' },
        lockAcquireSleepInterval: Number(interval),
        lockKeepAlivePeriod: Number(keepAlive),
        startup: 'background',
      }),
    ],
    providers: [Reporter],
  })
  class LeaseLockerModule {}
  const app = await NestFactory.createApplicationContext(LeaseLockerModule, { logger: ['error', 'warn'] });
  const locker = app.get(LockerService);
  send({ type: 'ready', instanceId: locker.instanceId });
  let termStart = 0;
  setInterval(() => {
    if (!locker.isMaster) {
      termStart = 0;
      return;
    }
    const now = Date.now();
    if (!termStart) termStart = now;
    appendFileSync(ticks, `${now} ${process.pid} ${termStart}\n`);
  }, 20);
}

process.on('disconnect', () => process.exit(0));
main().catch((error: Error) => {
  console.error(`lease locker worker: ${error.stack ?? error.message}`);
  process.exit(3);
});
