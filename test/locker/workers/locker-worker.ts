/**
 * One application instance for the multi-process locker suites and the benchmark. Config comes
 * as JSON in HOLDFAST_LOCKER_WORKER; it reports over IPC: ready, acquired, lost, status, exited.
 * `skewMs` shifts this process's wall clock (Date) to show the lease locker ignores it.
 */
import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { monotonicMillis } from '@holdfast/core/kit';
import { createTestDataSource, type TestDatabase } from '@holdfast/testing';
import {
  LockerModule,
  LockerService,
  OnLockAcquired,
  OnLockLost,
  type LockLostEvent,
  type LockerKindOptions,
} from '@holdfast/locker';

export interface WorkerConfig {
  name: string;
  db?: TestDatabase;
  sqliteFile?: string;
  port?: number;
  prefix: string;
  locker: LockerKindOptions;
  lockName?: string;
  /** Lock on another table (ActiveMQ's `ACTIVEMQ_LOCK`, made by its DDL); the schema is then checked, not created. */
  lockTableName?: string;
  interval: number;
  keepAlive: number;
  startup?: 'block' | 'background';
  failIfLocked?: boolean;
  skewMs?: number;
  /** Bootstrap like an HTTP app with enableShutdownHooks() before init (as apps/demo does). */
  shutdownHooks?: boolean;
}

export type WorkerMessage =
  | { type: 'ready'; name: string; role: string; at: number }
  | { type: 'acquired'; name: string; at: number }
  | { type: 'lost'; name: string; reason: string; at: number }
  | { type: 'status'; name: string; role: string; holder?: string; instanceId: string; lastError?: string }
  | { type: 'init-error'; name: string; error: string; code?: string; message: string; at: number }
  | { type: 'stopped'; name: string; at: number }
  | { type: 'signal-listeners'; name: string; count: number }
  | { type: 'released'; name: string; at: number }
  | { type: 'rejoined'; name: string; at: number };

const config = JSON.parse(process.env.HOLDFAST_LOCKER_WORKER ?? '{}') as WorkerConfig;
const send = (m: WorkerMessage) => process.send?.(m);

if (config.skewMs) {
  const RealDate = Date;
  const skew = config.skewMs;
  class SkewedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(RealDate.now() + skew);
      else super(...(args as [string]));
    }
    static override now(): number {
      return RealDate.now() + skew;
    }
  }
  globalThis.Date = SkewedDate as DateConstructor;
}

@Injectable()
class Reporter {
  @OnLockAcquired()
  acquired(): void {
    send({ type: 'acquired', name: config.name, at: monotonicMillis() });
  }

  @OnLockLost()
  lost(event: LockLostEvent): void {
    send({ type: 'lost', name: config.name, reason: event.reason, at: monotonicMillis() });
  }
}

@Module({})
class WorkerModule {
  static register(dataSource: unknown): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        LockerModule.forRoot({
          dataSource: dataSource as never,
          tablePrefix: config.prefix,
          schema: config.lockTableName ? 'check' : 'create',
          locker: config.locker,
          lockName: config.lockName,
          lockTableName: config.lockTableName,
          lockAcquireSleepInterval: config.interval,
          lockKeepAlivePeriod: config.keepAlive,
          startup: config.startup ?? 'background',
          failIfLocked: config.failIfLocked,
        }),
      ],
      providers: [Reporter],
    };
  }
}

async function main(): Promise<void> {
  const dataSource = config.db
    ? await createTestDataSource(config.db, { sqliteFile: config.sqliteFile, port: config.port, poolSize: 4 })
    : undefined;
  const logger = process.env.HOLDFAST_WORKER_LOG ? (['log', 'warn', 'error'] as const) : (['error'] as const);
  // Tells the test once something listens for SIGTERM (a standby blocked in bootstrap).
  const watch = setInterval(() => {
    const count = process.listenerCount('SIGTERM');
    if (count > 0) send({ type: 'signal-listeners', name: config.name, count });
  }, 50);
  watch.unref();
  let app;
  try {
    if (config.shutdownHooks) {
      app = await NestFactory.create(WorkerModule.register(dataSource), { logger: [...logger] });
      app.enableShutdownHooks();
      await app.init();
    } else {
      app = await NestFactory.createApplicationContext(WorkerModule.register(dataSource), {
        logger: [...logger],
      });
    }
  } catch (error) {
    const e = error as Error & { code?: string };
    send({
      type: 'init-error',
      name: config.name,
      error: e.name,
      code: e.code,
      message: e.message,
      at: monotonicMillis(),
    });
    await dataSource?.destroy().catch(() => undefined);
    process.exit(3);
  }
  const locker = app.get(LockerService);
  send({ type: 'ready', name: config.name, role: locker.role, at: monotonicMillis() });
  process.on('message', async (m: { type: string }) => {
    if (m.type === 'status') {
      const holder = await locker.readHolder().catch(() => undefined);
      const lastError = locker.lastError === undefined ? undefined : String(locker.lastError);
      send({
        type: 'status',
        name: config.name,
        role: locker.role,
        holder,
        instanceId: locker.instanceId,
        lastError,
      });
    } else if (m.type === 'release') {
      // The path application shutdown takes (beforeApplicationShutdown), without ending the process.
      await locker.stop();
      send({ type: 'released', name: config.name, at: monotonicMillis() });
    } else if (m.type === 'rejoin') {
      await locker.start();
      send({ type: 'rejoined', name: config.name, at: monotonicMillis() });
    } else if (m.type === 'stop') {
      await app.close();
      await dataSource?.destroy().catch(() => undefined);
      send({ type: 'stopped', name: config.name, at: monotonicMillis() });
      process.disconnect?.();
      process.exit(0);
    }
  });
}

process.on('disconnect', () => process.exit(0));
void main();
