/**
 * What the inbox test workers share: their DataSource, Simba beside the inbox in leader mode (the
 * owner of the mutex delivers; a killed owner is replaced after ttl + transition), and the app's
 * life over IPC ({t:'stop'} closes the app and the DataSource, then exits; {t:'ready'} is sent
 * once the app runs).
 */
import {
  Module,
  type DynamicModule,
  type INestApplicationContext,
  type LoggerService,
  type LogLevel,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { DataSource } from 'typeorm';
import { createTestDataSource, type TestDatabase } from '@holdfast/testing';
import { InboxModule, type InboxModuleOptions } from '@holdfast/inbox';
import { SimbaModule, type SimbaModuleOptions } from '@holdfast/simba';

export const send = (message: unknown) => process.send?.(message);

/** The worker's DataSource: a pool of 4, or the shared SQLite file. */
export function workerDataSource(db: string, sqliteFile?: string): Promise<DataSource> {
  return createTestDataSource(db as TestDatabase, { poolSize: 4, sqliteFile: sqliteFile || undefined });
}

/** SimbaModule on the same DataSource and prefix when `mode` is 'leader', else nothing. */
export function leaderSimba(
  dataSource: DataSource,
  prefix: string,
  mode: string,
  options: Partial<SimbaModuleOptions> = {},
): DynamicModule[] {
  if (mode !== 'leader') return [];
  return [
    SimbaModule.forRoot({
      dataSource,
      tablePrefix: prefix,
      schema: 'create',
      ttl: '3s',
      transition: '2s',
      ...options,
    }),
  ];
}

/**
 * The worker's module: an inbox on `dataSource` with the table `prefix` (checked, not created:
 * the test makes it), in cluster `mode`, with Simba beside it in leader mode, and `providers`.
 */
export function inboxWorkerModule(
  dataSource: DataSource,
  prefix: string,
  mode: string,
  inbox: Partial<InboxModuleOptions>,
  providers: Type[],
  simba: Partial<SimbaModuleOptions> = {},
): Type {
  class WorkerModule {}
  Module({
    imports: [
      InboxModule.forRoot({
        dataSource,
        tablePrefix: prefix,
        schema: 'check',
        cluster: mode as 'competing' | 'leader',
        ...inbox,
      }),
      ...leaderSimba(dataSource, prefix, mode, simba),
    ],
    providers,
  })(WorkerModule);
  return WorkerModule;
}

/** Runs `module`, and closes it (then the DataSource, then the process) on {t:'stop'}. */
export async function startWorkerApp(
  module: Type,
  dataSource: DataSource,
  options: { logger?: LoggerService | LogLevel[]; onStop?: () => void } = {},
): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(module, { logger: options.logger ?? ['error'] });
  process.on('message', (m: { t?: string }) => {
    if (m?.t !== 'stop') return;
    options.onStop?.();
    void app
      .close()
      .then(() => dataSource.destroy())
      .finally(() => process.exit(0));
  });
  return app;
}

/** Tells the parent the worker is up. */
export function ready(): void {
  send({ t: 'ready', pid: process.pid });
}

/** Runs the worker's main; a failure ends the process with its error on stderr. */
export function runWorker(main: () => Promise<void>): void {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
