/**
 * A process contending for many mutexes at once (the scale test and benchmark).
 * argv: <db> <prefix> <mutexCount> <sqliteFile|-> <ttlMs> <transitionMs> <standbyPollMs>
 * Database URLs come from HOLDFAST_TEST_PG_URL / HOLDFAST_TEST_MARIADB_URL.
 * IPC out: {type:'ready'}; {type:'events', events: [[kind, mutexIndex, epochMs]]} where kind is
 * 'a' (acquired) or 'r' (released), sent every 100 ms; {type:'cpu', user, system, wall} on request.
 * IPC in: {type:'cpu'} (CPU time used since the last request), {type:'stop'}.
 */
import 'reflect-metadata';
import { Module, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createTestDataSource, type TestDatabase } from '@holdfast/testing';
import { defaultContenderId, MutexContendServiceFactory, SimbaModule } from '@holdfast/simba';

async function main(): Promise<void> {
  const [db, prefix, count, sqliteFile, ttl, transition, standbyPoll] = process.argv.slice(2);
  const dataSource = await createTestDataSource(db as TestDatabase, {
    sqliteFile: sqliteFile === '-' ? undefined : sqliteFile,
    poolSize: 4,
  });

  @Module({
    imports: [
      SimbaModule.forRoot({
        dataSource,
        tablePrefix: prefix,
        schema: 'check',
        ttl: Number(ttl),
        transition: Number(transition),
        standbyPoll: Number(standbyPoll),
      }),
    ],
  })
  class WorkerModule {}

  const levels = (process.env.SIMBA_WORKER_LOG_LEVELS ?? 'error,warn').split(',') as LogLevel[];
  const app = await NestFactory.createApplicationContext(WorkerModule, { logger: levels });
  const send = (message: object) => process.connected && process.send?.(message);
  const factory = app.get(MutexContendServiceFactory);
  let events: [string, number, number][] = [];
  const id = defaultContenderId();
  const services = Array.from({ length: Number(count) }, (_, i) =>
    factory.createMutexContendService({
      mutex: `scale-${i}`,
      contenderId: id,
      onAcquired: () => void events.push(['a', i, Date.now()]),
      onReleased: () => void events.push(['r', i, Date.now()]),
    }),
  );
  services.forEach((s) => s.start());
  setInterval(() => {
    if (events.length === 0) return;
    send({ type: 'events', events });
    events = [];
  }, 100);

  let cpu = process.cpuUsage();
  let wall = performance.now();
  process.on('message', (message: { type?: string }) => {
    if (message?.type === 'cpu') {
      const used = process.cpuUsage(cpu);
      const now = performance.now();
      send({ type: 'cpu', user: used.user / 1000, system: used.system / 1000, wall: now - wall });
      cpu = process.cpuUsage();
      wall = now;
    }
    if (message?.type === 'stop') {
      void (async () => {
        await Promise.all(services.map((s) => s.stop()));
        send({ type: 'events', events });
        await app.close();
        await dataSource.destroy();
        process.exit(0);
      })();
    }
  });
  send({ type: 'ready' });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
