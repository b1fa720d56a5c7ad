/**
 * A worker-only application (NestFactory.createApplicationContext, no HTTP server, shutdown hooks
 * on), shaped like a queue worker in production: nothing of its own keeps the process alive, and
 * its IPC channel to the test is unref()'d so that it does not either. Which modules it runs comes
 * from argv: any of inbox (competing delivery; on SQLite in leader mode, with simba), simba (one contender by @OnMutexAcquired), locker
 * (a lease-database lock), comma-separated.
 * argv: <db> <database url|-> <tablePrefix> <modules> [sqlite file]
 * IPC out: {t:'ready'}, {t:'delivered', id}, {t:'acquired'|'released', what}, {t:'log', level,
 * context, message, stack}, {t:'accepted', id}, {t:'closed'}.
 * IPC in: {t:'accept', id} (accepts a message), {t:'status'} (answers {t:'status', simba: owner?,
 * locker: role}), {t:'close'} (app.close(), then the DataSource's
 * destroy, and no process.exit: the process must end by itself).
 */
import 'reflect-metadata';
import {
  ConsoleLogger,
  Injectable,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { testDataSourceOptions, type TestDatabase } from '@holdfast/testing';
import { InboxHandler, InboxModule, MessageAcceptor, type InboxMessage } from '@holdfast/inbox';
import { LockerModule, LockerService, OnLockAcquired, OnLockLost } from '@holdfast/locker';
import { MutexContendRegistry, OnMutexAcquired, OnMutexReleased, SimbaModule } from '@holdfast/simba';

const [db, url, prefix, modules, sqliteFile] = process.argv.slice(2);
const enabled = new Set(modules.split(','));
const send = (message: object) => {
  if (process.connected) process.send?.(message);
};

const STACK = /\n\s+at /;

/** Prints like Nest's logger, and tells the test about every warning and error line. */
class ReportingLogger extends ConsoleLogger {
  override warn(message: unknown, ...rest: unknown[]): void {
    this.report('warn', message, rest);
    super.warn(message, ...(rest as string[]));
  }

  override error(message: unknown, ...rest: unknown[]): void {
    this.report('error', message, rest);
    super.error(message, ...(rest as string[]));
  }

  private report(level: string, message: unknown, rest: unknown[]): void {
    const parts = [message, ...rest].map((p) => (p instanceof Error ? String(p.stack) : String(p)));
    send({
      t: 'log',
      level,
      context: rest.length ? String(rest[rest.length - 1]) : '',
      message: String(message instanceof Error ? message.message : message),
      stack: parts.some((p) => STACK.test(p)),
    });
  }
}

@Injectable()
class Deliveries {
  @InboxHandler({ namespace: 'outage', name: 'item' })
  handle(message: InboxMessage): void {
    send({ t: 'delivered', id: message.id });
  }
}

@Injectable()
class Roles implements OnApplicationShutdown {
  @OnMutexAcquired('outage-worker')
  mutexAcquired(): void {
    send({ t: 'acquired', what: 'simba' });
  }

  @OnMutexReleased('outage-worker')
  mutexReleased(): void {
    send({ t: 'released', what: 'simba' });
  }

  onApplicationShutdown(): void {
    send({ t: 'closed' });
  }
}

@Injectable()
class LockRoles {
  @OnLockAcquired()
  acquired(): void {
    send({ t: 'acquired', what: 'locker' });
  }

  @OnLockLost()
  lost(): void {
    send({ t: 'released', what: 'locker' });
  }
}

function workerModule(dataSource: DataSource): DynamicModule {
  const imports: DynamicModule[] = [];
  if (enabled.has('inbox'))
    imports.push(
      InboxModule.forRoot({
        dataSource,
        tablePrefix: prefix,
        schema: 'create',
        // SQLite has no SKIP LOCKED: one delivering node, the owner of a Simba mutex.
        cluster: db === 'sqlite' ? 'leader' : 'competing',
        pollInterval: '200ms',
      }),
    );
  if (enabled.has('simba'))
    imports.push(
      SimbaModule.forRoot({ dataSource, tablePrefix: prefix, schema: 'create', ttl: '3s', transition: '2s' }),
    );
  if (enabled.has('locker'))
    imports.push(
      LockerModule.forRoot({
        dataSource,
        tablePrefix: prefix,
        schema: 'create',
        locker: { type: 'lease-database' },
        lockAcquireSleepInterval: '2s',
        startup: 'background',
      }),
    );
  class WorkerModule {}
  Module({})(WorkerModule);
  return {
    module: WorkerModule,
    imports,
    providers: [
      ...(enabled.has('inbox') ? [Deliveries] : []),
      ...(enabled.has('locker') ? [LockRoles] : []),
      Roles,
    ],
  };
}

async function main(): Promise<void> {
  const options = testDataSourceOptions(db as TestDatabase, {
    poolSize: 8,
    sqliteFile: sqliteFile || undefined,
  });
  const dataSource = await new DataSource(
    url && url !== '-' ? ({ ...options, url } as typeof options) : options,
  ).initialize();
  const app = await NestFactory.createApplicationContext(workerModule(dataSource), {
    logger: new ReportingLogger(),
  });
  app.enableShutdownHooks();
  process.on('message', (m: { t?: string; id?: string }) => {
    if (m?.t === 'accept' && m.id) {
      void app
        .get(MessageAcceptor)
        .accept({ id: m.id, type: { namespace: 'outage', name: 'item' }, payload: {} })
        .then(
          () => send({ t: 'accepted', id: m.id }),
          (error: Error) => send({ t: 'accept-failed', id: m.id, error: error.message }),
        );
    }
    if (m?.t === 'status') {
      send({
        t: 'status',
        simba: enabled.has('simba') ? app.get(MutexContendRegistry).isOwner('outage-worker') : undefined,
        locker: enabled.has('locker') ? app.get(LockerService).role : undefined,
      });
    }
    if (m?.t === 'close') void app.close().then(() => dataSource.destroy());
  });
  // Only the work the app started may keep this process alive, as in production (a forked
  // child's IPC channel would otherwise keep it running).
  process.channel?.unref();
  send({ t: 'ready', pid: process.pid });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
