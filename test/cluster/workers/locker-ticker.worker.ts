/**
 * One application instance of `@holdfast/locker` for the cluster suites, on PostgreSQL through
 * HOLDFAST_TEST_PG_URL (an endpoint such as HAProxy in front of Patroni).
 * argv: <prefix> <locker type: database | lease-database> <ticksFile> <lockAcquireSleepInterval ms> <lockKeepAlivePeriod ms>
 * IPC out: {t:'ready'}, {t:'acquired'}, {t:'lost', reason}.
 * While `LockerService.isMaster` is true it appends "<epoch ms> <pid>" to the ticks file every
 * 20 ms: what the process believes, sampled, not only the events it reports.
 * SIMBA_WORKER_LOG_LEVELS (default 'error'): the Nest log levels it prints, comma-separated (the
 * same variable as the Simba contender, so one suite sets both).
 */
import 'reflect-metadata';
import { appendFileSync } from 'node:fs';
import { Injectable, Module, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createTestDataSource } from '@holdfast/testing';
import {
  LockerModule,
  LockerService,
  OnLockAcquired,
  OnLockLost,
  type LockLostEvent,
} from '@holdfast/locker';

const send = (message: object) => process.connected && process.send?.(message);

@Injectable()
class Reporter {
  @OnLockAcquired()
  acquired(): void {
    send({ t: 'acquired' });
  }

  @OnLockLost()
  lost(event: LockLostEvent): void {
    send({ t: 'lost', reason: event.reason });
  }
}

async function main(): Promise<void> {
  const [prefix, type, ticksFile, interval, keepAlive] = process.argv.slice(2);
  if (type !== 'database' && type !== 'lease-database') throw new Error(`unknown locker type ${type}`);
  const dataSource = await createTestDataSource('postgres', { poolSize: 3 });

  @Module({
    imports: [
      LockerModule.forRoot({
        dataSource,
        tablePrefix: prefix,
        schema: 'create',
        locker: { type },
        lockAcquireSleepInterval: Number(interval),
        lockKeepAlivePeriod: Number(keepAlive),
        startup: 'background',
      }),
    ],
    providers: [Reporter],
  })
  class WorkerModule {}

  const levels = (process.env.SIMBA_WORKER_LOG_LEVELS ?? 'error').split(',') as LogLevel[];
  const app = await NestFactory.createApplicationContext(WorkerModule, { logger: levels });
  const locker = app.get(LockerService);
  setInterval(() => {
    // The time is read before the check: nothing can interleave between the two, so a line
    // claims only an instant at which this process believed it was master.
    const at = Date.now();
    if (locker.isMaster) appendFileSync(ticksFile, `${at} ${process.pid}\n`);
  }, 20);
  send({ t: 'ready' });
}

process.on('disconnect', () => process.exit(0));
main().catch((error) => {
  console.error(error);
  process.exit(1);
});
