/**
 * One application instance for the app-load suites and `npm run bench -- app-load` (#31): a
 * DataSource pool of `poolSize` shared by Holdfast (a Simba contender, a locker or a delivering
 * inbox) and `loops` application loops, each running a `queryMs` sleep query back to back.
 * Config: JSON in HOLDFAST_APP_LOAD_WORKER (AppLoadWorkerConfig).
 * IPC out: ready, acquired, released (Simba) / lost (locker), delivered (inbox), stats, stopped.
 * IPC in: {t:'load'} starts the application loops, {t:'stats'}, {t:'stop'}.
 * `stats.longestMs` is the longest call of Holdfast's SqlClient in this process once the load ran
 * (a Simba tick's transaction, a lease renewal, a claim, a heartbeat), connection wait included.
 */
import 'reflect-metadata';
import { Injectable, Module, type DynamicModule, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { monotonicMillis, SqlClient } from '@holdfast/core/kit';
import { createTestDataSource, type TestDatabase } from '@holdfast/testing';
import { InboxHandler, InboxModule, type InboxMessage } from '@holdfast/inbox';
import { LockerModule, OnLockAcquired, OnLockLost, type LockLostEvent } from '@holdfast/locker';
import { MutexContendServiceFactory, SimbaModule, type MutexState } from '@holdfast/simba';
import type { DataSource } from 'typeorm';

export interface AppLoadWorkerConfig {
  role: 'simba' | 'lease-database' | 'database' | 'inbox';
  name: string;
  db: TestDatabase;
  prefix: string;
  /** Application loops on the shared pool (0: an idle standby). */
  loops: number;
  queryMs: number;
  poolSize: number;
  mutex?: string;
  /** Simba: its ttl and transition (ms; Simba's defaults when left out). */
  ttl?: number;
  transition?: number;
  /** Inbox: the lease and how long a handler takes. */
  visibilityTimeout?: number;
  handlerMs?: number;
  batchSize?: number;
}

const config = JSON.parse(process.env.HOLDFAST_APP_LOAD_WORKER ?? '{}') as AppLoadWorkerConfig;
const send = (message: object) => process.connected && process.send?.(message);

let measuring = false;
let longestMs = 0;
let longestWhat = '';
/** Times every call of Holdfast's SqlClient (the application loops use the DataSource directly). */
function timeSqlClient(): void {
  const proto = SqlClient.prototype as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const method of ['query', 'execute', 'transaction']) {
    const original = proto[method];
    proto[method] = function (this: SqlClient, ...args: unknown[]) {
      const started = monotonicMillis();
      const result = original.apply(this, args);
      const done = () => {
        const took = monotonicMillis() - started;
        if (measuring && took > longestMs) {
          longestMs = took;
          longestWhat = `${method}${typeof args[0] === 'string' ? ` ${args[0].slice(0, 60)}` : ''}`;
        }
      };
      result.then(done, done);
      return result;
    };
  }
}

function sleepSql(db: TestDatabase, ms: number): string {
  return db === 'postgres' ? `SELECT pg_sleep(${ms / 1000})` : `SELECT SLEEP(${ms / 1000})`;
}

/** The application's own work: `loops` loops, each running one slow query after another. */
function startLoad(dataSource: DataSource): { stop(): Promise<void>; queries(): number } {
  let running = true;
  let count = 0;
  const sql = sleepSql(config.db, config.queryMs);
  const loops = Array.from({ length: config.loops }, async () => {
    while (running) {
      await dataSource.query(sql).then(
        () => count++,
        () => undefined,
      );
    }
  });
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
    queries: () => count,
  };
}

@Injectable()
class LockReporter {
  @OnLockAcquired()
  acquired(): void {
    send({ t: 'acquired', name: config.name, at: Date.now() });
  }

  @OnLockLost()
  lost(event: LockLostEvent): void {
    send({ t: 'lost', name: config.name, reason: event.reason, at: Date.now() });
  }
}

@Injectable()
class InboxReporter {
  @InboxHandler({ namespace: 'load', name: 'item' })
  async handle(message: InboxMessage): Promise<void> {
    send({ t: 'delivered', name: config.name, id: message.id });
    await new Promise((resolve) => setTimeout(resolve, config.handlerMs ?? 0));
  }
}

function holdfastModule(dataSource: DataSource): { imports: DynamicModule[]; providers: Type[] } {
  const common = { dataSource, tablePrefix: config.prefix, schema: 'create' as const };
  switch (config.role) {
    case 'simba':
      return {
        imports: [
          SimbaModule.forRoot({
            ...common,
            ...(config.ttl ? { ttl: config.ttl, transition: config.transition } : {}),
          }),
        ],
        providers: [],
      };
    case 'lease-database':
    case 'database':
      return {
        imports: [LockerModule.forRoot({ ...common, locker: { type: config.role }, startup: 'background' })],
        providers: [LockReporter],
      };
    case 'inbox':
      return {
        imports: [
          InboxModule.forRoot({
            ...common,
            cluster: 'competing',
            pollInterval: '200ms',
            batchSize: config.batchSize ?? 10,
            visibilityTimeout: config.visibilityTimeout ?? 60_000,
          }),
        ],
        providers: [InboxReporter],
      };
  }
}

async function main(): Promise<void> {
  timeSqlClient();
  const dataSource = await createTestDataSource(config.db, { poolSize: config.poolSize });
  const { imports, providers } = holdfastModule(dataSource);
  @Module({ imports, providers })
  class WorkerModule {}
  const levels = process.env.HOLDFAST_WORKER_LOG ? (['log', 'warn', 'error'] as const) : (['error'] as const);
  const app = await NestFactory.createApplicationContext(WorkerModule, { logger: [...levels] });

  if (config.role === 'simba') {
    const service = app.get(MutexContendServiceFactory).createMutexContendService({
      mutex: config.mutex ?? 'app-load',
      contenderId: `${config.name}-${process.pid}`,
      onAcquired: (state: MutexState) =>
        void send({ t: 'acquired', name: config.name, token: state.fencingToken, at: Date.now() }),
      onReleased: () => void send({ t: 'released', name: config.name, at: Date.now() }),
    });
    service.start();
  }

  let load: ReturnType<typeof startLoad> | undefined;
  process.on('message', (m: { t?: string }) => {
    if (m?.t === 'load') {
      measuring = true;
      load = startLoad(dataSource);
      send({ t: 'loading', name: config.name });
    } else if (m?.t === 'stats') {
      send({ t: 'stats', name: config.name, longestMs, longestWhat, queries: load?.queries() ?? 0 });
    } else if (m?.t === 'stop') {
      measuring = false;
      void (async () => {
        await load?.stop();
        await app.close();
        await dataSource.destroy();
        send({ t: 'stopped', name: config.name });
        process.exit(0);
      })();
    }
  });
  send({ t: 'ready', name: config.name });
}

process.on('disconnect', () => process.exit(0));
main().catch((error) => {
  console.error(error);
  process.exit(1);
});
