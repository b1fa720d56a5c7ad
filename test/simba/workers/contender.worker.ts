/**
 * A real process contending for one mutex (used by the soak test and the benchmark).
 * argv: <db> <prefix> <mutex> <logFile|-> <sqliteFile|-> <ttlMs> <transitionMs>
 * IPC out: {type:'ready'}, {type:'acquired', token}, {type:'released'}, {type:'paused'}.
 * IPC in: {type:'stop'} (stop contending, close, exit), {type:'pause'} (stop contending), {type:'resume'},
 * {type:'health', count} (that many SimbaHealthIndicator checks at once, as readiness probes arriving
 * together; answered by {type:'health', up} with how many were up).
 * While it believes it owns, it appends "<epoch ms> <fencing token> <pid>" to the log every 20 ms.
 * SIMBA_WORKER_LOG_LEVELS (default 'error'): the Nest log levels it prints, comma-separated.
 */
import 'reflect-metadata';
import { appendFileSync } from 'node:fs';
import { Module, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createTestDataSource, type TestDatabase } from '@holdfast/testing';
import {
  MutexContendServiceFactory,
  SimbaHealthIndicator,
  SimbaModule,
  type MutexState,
} from '@holdfast/simba';

async function main(): Promise<void> {
  const [db, prefix, mutex, logFile, sqliteFile, ttl, transition] = process.argv.slice(2);
  const dataSource = await createTestDataSource(db as TestDatabase, {
    sqliteFile: sqliteFile === '-' ? undefined : sqliteFile,
    poolSize: 3,
  });

  @Module({
    imports: [
      SimbaModule.forRoot({
        dataSource,
        tablePrefix: prefix,
        schema: 'create',
        ttl: Number(ttl),
        transition: Number(transition),
        standbyPoll: 100,
      }),
    ],
  })
  class WorkerModule {}

  const levels = (process.env.SIMBA_WORKER_LOG_LEVELS ?? 'error').split(',') as LogLevel[];
  const app = await NestFactory.createApplicationContext(WorkerModule, { logger: levels });
  const send = (message: object) => process.connected && process.send?.(message);
  const service = app.get(MutexContendServiceFactory).createMutexContendService({
    mutex,
    contenderId: `worker-${process.pid}`,
    onAcquired: (state: MutexState) => void send({ type: 'acquired', token: state.fencingToken }),
    onReleased: () => void send({ type: 'released' }),
  });
  service.start();

  if (logFile !== '-') {
    setInterval(() => {
      // The time is read before the ownership check: JavaScript cannot interleave an acquisition
      // between the two, so the line claims only an instant at which the process owned.
      const at = Date.now();
      const token = service.fencingToken;
      if (token !== undefined) appendFileSync(logFile, `${at} ${token} ${process.pid}\n`);
    }, 20);
  }

  process.on('message', (message: { type?: string; count?: number }) => {
    if (message?.type === 'health') {
      const health = app.get(SimbaHealthIndicator);
      void Promise.all(
        Array.from({ length: message.count ?? 1 }, () =>
          health.isHealthy().then((r) => r.simba.status === 'up'),
        ),
      ).then((results) => send({ type: 'health', up: results.filter(Boolean).length }));
      return;
    }
    if (message?.type === 'pause') {
      void service.stop().then(() => send({ type: 'paused' }));
      return;
    }
    if (message?.type === 'resume') {
      service.start();
      return;
    }
    if (message?.type !== 'stop') return;
    void (async () => {
      await service.stop();
      send({ type: 'stopped' });
      await app.close();
      await dataSource.destroy();
      process.exit(0);
    })();
  });
  send({ type: 'ready' });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
