/**
 * One application instance running a per-second @Cron job under @ScheduledLock, for the
 * multi-process suite. Config as JSON in HOLDFAST_SCHEDULED_WORKER; reports over IPC: ready,
 * run (a job started: wall-clock and monotonic time), done.
 */
import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import { monotonicMillis } from '@holdfast/core/kit';
import { createTestDataSource, type TestDatabase } from '@holdfast/testing';
import { ScheduledLock, ScheduledLockModule } from '@holdfast/locker';

export interface ScheduledWorkerConfig {
  name: string;
  db: TestDatabase;
  sqliteFile?: string;
  /** Reach the server through this port (a TcpProxy's) instead of its own. */
  port?: number;
  prefix: string;
  lockName: string;
  lockAtMostFor: number;
  lockAtLeastFor: number;
  /** How long each run takes. */
  jobMs: number;
  /**
   * The job does nothing until the parent sends { type: 'go' }: an instance that starts early
   * cannot run ticks while its peers are still starting.
   */
  awaitGo?: boolean;
}

export type ScheduledWorkerMessage =
  | { type: 'ready'; name: string }
  | { type: 'run'; name: string; wall: number; at: number }
  | { type: 'done'; name: string; at: number };

const config = JSON.parse(process.env.HOLDFAST_SCHEDULED_WORKER ?? '{}') as ScheduledWorkerConfig;
const send = (m: ScheduledWorkerMessage) => process.send?.(m);
let go = !config.awaitGo;
process.on('message', (m: { type?: string }) => {
  if (m?.type === 'go') go = true;
});

@Injectable()
class Jobs {
  @Cron('* * * * * *')
  @ScheduledLock({
    name: config.lockName,
    lockAtMostFor: config.lockAtMostFor,
    lockAtLeastFor: config.lockAtLeastFor,
  })
  async everySecond(): Promise<void> {
    if (!go) return;
    send({ type: 'run', name: config.name, wall: Date.now(), at: monotonicMillis() });
    await new Promise((r) => setTimeout(r, config.jobMs));
    send({ type: 'done', name: config.name, at: monotonicMillis() });
  }
}

@Module({})
class WorkerModule {
  static register(dataSource: unknown): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        ScheduleModule.forRoot(),
        ScheduledLockModule.forRoot({
          dataSource: dataSource as never,
          tablePrefix: config.prefix,
          schema: 'create',
        }),
      ],
      providers: [Jobs],
    };
  }
}

async function main(): Promise<void> {
  const dataSource = await createTestDataSource(config.db, {
    sqliteFile: config.sqliteFile,
    port: config.port,
    poolSize: 4,
  });
  const logger = process.env.HOLDFAST_WORKER_LOG ? (['log', 'warn', 'error'] as const) : (['error'] as const);
  await NestFactory.createApplicationContext(WorkerModule.register(dataSource), { logger: [...logger] });
  send({ type: 'ready', name: config.name });
}

process.on('disconnect', () => process.exit(0));
void main();
