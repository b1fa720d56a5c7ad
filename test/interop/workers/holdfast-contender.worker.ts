/**
 * A Holdfast process contending for a mutex on a table made by Simba's DDL, with the default
 * contender id, writing its ownership to the shared history.
 * argv: <db> <prefix> <mutex> <historyFile> <proc> <ttlMs> <transitionMs>
 * IPC out: {type:'ready'}, {type:'acquired', token}, {type:'released'}, {type:'error', message}.
 * IPC in: {type:'pause'} (stop contending), {type:'resume'}.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createTestDataSource, type TestDatabase } from '@holdfast/testing';
import { MutexContendServiceFactory, SimbaModule, defaultContenderId } from '@holdfast/simba';
import { HistoryWriter } from '../../../tools/history/history';

async function main(): Promise<void> {
  const [db, prefix, mutex, historyFile, proc, ttl, transition] = process.argv.slice(2);
  const send = (message: object) => process.connected && process.send?.(message);
  const dataSource = await createTestDataSource(db as TestDatabase, { poolSize: 3 });

  @Module({
    imports: [
      SimbaModule.forRoot({
        dataSource,
        tablePrefix: prefix,
        ttl: Number(ttl),
        transition: Number(transition),
        standbyPoll: 100,
      }),
    ],
  })
  class WorkerModule {}

  const app = await NestFactory.createApplicationContext(WorkerModule, { logger: ['error', 'warn'] });
  const service = app.get(MutexContendServiceFactory).createMutexContendService({
    mutex,
    contenderId: defaultContenderId(),
    onAcquired: () => undefined,
    onReleased: () => undefined,
  });
  const history = new HistoryWriter(historyFile, proc);

  // What the process believes, sampled every 10 ms: a grant when the token appears or changes,
  // a release (on the database clock, estimated from the last reading) when it is gone.
  let token: number | undefined;
  setInterval(() => {
    const now = service.fencingToken;
    const row = service.afterOwner;
    if (now !== undefined && now !== token) {
      history.append({
        kind: 'simba',
        op: token === undefined ? 'acquire' : 'renew',
        mutex,
        token: now,
        version: row.version,
        at: row.acquiredAt,
        acquiredAt: row.acquiredAt,
        ttlAt: row.ttlAt,
        transitionAt: row.transitionAt,
      });
      if (token === undefined) send({ type: 'acquired', token: now });
    } else if (now === undefined && token !== undefined) {
      history.append({
        kind: 'simba',
        op: 'release',
        mutex,
        token,
        at: Math.round(row.estimatedDatabaseNow()),
      });
      send({ type: 'released' });
    }
    token = now;
  }, 10);

  let paused = false;
  let stopping: Promise<void> = Promise.resolve();
  process.on('message', (message: { type?: string }) => {
    if (message?.type === 'pause' && !paused) {
      paused = true;
      stopping = service.stop().catch((error: Error) => void send({ type: 'error', message: error.message }));
    }
    if (message?.type === 'resume' && paused) {
      paused = false;
      void stopping.then(() => {
        if (!paused) service.start();
      });
    }
  });
  process.on('disconnect', () => process.exit(0));
  service.start();
  send({ type: 'ready' });
}

main().catch((error) => {
  if (process.connected) process.send?.({ type: 'error', message: String(error?.stack ?? error) });
  console.error(error);
  process.exit(1);
});
