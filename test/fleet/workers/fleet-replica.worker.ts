/**
 * One replica of the fleet (#43): a Nest service with an application pool of 5 and every
 * coordination module on it, as a platform team runs tens of them on one database server:
 * - Simba: a `@LeaderOnly` job on `fleet-leader` (reported on `@OnMutexAcquired`/`Released`) and
 *   `shards` mutexes `shard-<i>`, each a contender of its own (`spread` as the module option, when
 *   given);
 * - a `lease-database` LockerModule (`fleet-master`), started in the background;
 * - a delivering inbox (competing; on PostgreSQL with LISTEN/NOTIFY), whose handler reports ids.
 * Config: JSON in HOLDFAST_FLEET_REPLICA (FleetReplicaConfig).
 * IPC out: {t:'booted'}, {t:'failed', code, message} (then exit 1), {t:'leader'|'master', on},
 * {t:'shard', mutex, on}, {t:'delivered', ids} (every 100 ms), {t:'log', level, message} (every
 * warning and error a Holdfast class logged), {t:'cpu', ms} (on {t:'cpu'}), {t:'closed'}.
 * IPC in: {t:'cpu'}, {t:'stop'} (app.close(), then exit 0).
 */
import 'reflect-metadata';
import { Injectable, Module, type LoggerService, type OnApplicationBootstrap } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Interval, ScheduleModule } from '@nestjs/schedule';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { InboxHandler, InboxModule, type InboxMessage } from '@holdfast/inbox';
import { LockerModule, OnLockAcquired, OnLockLost } from '@holdfast/locker';
import {
  LeaderOnly,
  MutexContendServiceFactory,
  OnMutexAcquired,
  OnMutexReleased,
  SimbaModule,
  type MutexContendService,
  type SimbaModuleOptions,
} from '@holdfast/simba';

export interface FleetReplicaConfig {
  db: 'postgres' | 'mariadb';
  /** The application's connection URL (a role without superuser rights). */
  url: string;
  prefix: string;
  name: string;
  /** Shard mutexes `shard-0` … */
  shards: number;
  /** More SimbaModule options (`spread`, timings). */
  simba?: Partial<SimbaModuleOptions>;
  /** More InboxModule options (e.g. `batchSize`). */
  inbox?: Record<string, unknown>;
  /** More options of configureCoordinationPool (when the code has it), e.g. `whenServerFull`. */
  budget?: Record<string, unknown>;
  /** The application pool's size (5 by default, as in the issue). */
  poolSize?: number;
}

export const FLEET_LEADER = 'fleet-leader';
export const FLEET_LOCK = 'fleet-master';
export const FLEET_TYPE = { namespace: 'fleet', name: 'work' };

const config = JSON.parse(process.env.HOLDFAST_FLEET_REPLICA ?? '{}') as FleetReplicaConfig;
const send = (message: object) => process.connected && process.send?.(message);

/** Warnings and errors to the parent (they are counted there); nothing else is printed. */
class ReportingLogger implements LoggerService {
  log(): void {}
  debug(): void {}
  verbose(): void {}
  warn(message: unknown, context?: string): void {
    send({ t: 'log', level: 'warn', message: `${context ?? ''}: ${String(message)}` });
  }
  error(message: unknown, ...rest: unknown[]): void {
    const context = rest.length ? String(rest[rest.length - 1]) : '';
    send({ t: 'log', level: 'error', message: `${context}: ${String(message)}` });
  }
}

let delivered: string[] = [];

@Injectable()
class Work {
  @InboxHandler(FLEET_TYPE)
  handle(message: InboxMessage): void {
    delivered.push(message.id);
  }

  @OnMutexAcquired(FLEET_LEADER)
  led(): void {
    send({ t: 'leader', on: true, at: Date.now() });
  }

  @OnMutexReleased(FLEET_LEADER)
  followed(): void {
    send({ t: 'leader', on: false, at: Date.now() });
  }

  @Interval(1_000)
  @LeaderOnly(FLEET_LEADER)
  leaderJob(): void {}

  @OnLockAcquired()
  master(): void {
    send({ t: 'master', on: true, at: Date.now() });
  }

  @OnLockLost()
  standby(): void {
    send({ t: 'master', on: false, at: Date.now() });
  }
}

/** The shard mutexes: one contender each, started with the application. */
@Injectable()
class Shards implements OnApplicationBootstrap {
  readonly services: MutexContendService[] = [];
  constructor(private readonly factory: MutexContendServiceFactory) {}

  onApplicationBootstrap(): void {
    for (let i = 0; i < config.shards; i++) {
      const mutex = `shard-${i}`;
      const service = this.factory.createMutexContendService({
        mutex,
        contenderId: `${config.name}`.slice(0, 32),
        onAcquired: () => void send({ t: 'shard', mutex, on: true, at: Date.now() }),
        onReleased: () => void send({ t: 'shard', mutex, on: false, at: Date.now() }),
      });
      service.start();
      this.services.push(service);
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.services.map((s) => s.stop().catch(() => undefined)));
  }
}

function dataSourceOptions(): DataSourceOptions {
  const poolSize = config.poolSize ?? 5;
  return config.db === 'postgres'
    ? ({
        type: 'postgres',
        url: config.url,
        poolSize,
        extra: { max: poolSize },
        connectTimeoutMS: 10_000,
      } as DataSourceOptions)
    : ({
        type: 'mariadb',
        url: config.url,
        timezone: 'Z',
        poolSize,
        connectTimeout: 10_000,
        extra: { connectionLimit: poolSize },
      } as DataSourceOptions);
}

async function main(): Promise<void> {
  const dataSource = await new DataSource(dataSourceOptions()).initialize();
  const core = (await import('@holdfast/core')) as Record<string, unknown>;
  const configure = core.configureCoordinationPool as
    ((ds: DataSource, options: Record<string, unknown>) => void) | undefined;
  if (config.budget && configure) configure(dataSource, config.budget);
  const common = { dataSource, tablePrefix: config.prefix, schema: 'check' as const };

  @Module({
    imports: [
      ScheduleModule.forRoot(),
      SimbaModule.forRoot({ ...common, ...config.simba }),
      LockerModule.forRoot({
        ...common,
        locker: { type: 'lease-database' },
        lockName: FLEET_LOCK,
        lockKeepAlivePeriod: '2s',
        lockAcquireSleepInterval: '5s',
        startup: 'background',
      }),
      InboxModule.forRoot({ ...common, cluster: 'competing', ...config.inbox }),
    ],
    providers: [Work, Shards],
  })
  class ReplicaModule {}

  let app;
  try {
    app = await NestFactory.createApplicationContext(ReplicaModule, {
      logger: new ReportingLogger(),
      abortOnError: false,
    });
  } catch (error) {
    const e = error as { code?: unknown; message?: string };
    send({
      t: 'failed',
      code: typeof e.code === 'string' ? e.code : undefined,
      message: String(e.message ?? error),
    });
    await dataSource.destroy().catch(() => undefined);
    setTimeout(() => process.exit(1), 100);
    return;
  }
  const shards = app.get(Shards);
  const flush = setInterval(() => {
    if (!delivered.length) return;
    send({ t: 'delivered', ids: delivered });
    delivered = [];
  }, 100);
  process.on('message', (m: { t: string }) => {
    if (m.t === 'cpu') {
      const cpu = process.cpuUsage();
      send({ t: 'cpu', ms: (cpu.user + cpu.system) / 1000 });
    }
    if (m.t === 'stop') {
      void (async () => {
        await shards.stop();
        await app.close();
        await dataSource.destroy().catch(() => undefined);
        clearInterval(flush);
        if (delivered.length) send({ t: 'delivered', ids: delivered });
        send({ t: 'closed' });
        setTimeout(() => process.exit(0), 100);
      })();
    }
  });
  send({ t: 'booted', at: Date.now() });
}

// A replica whose parent died (a killed bench or test) ends too, instead of living on.
if (process.env.HOLDFAST_FLEET_REPLICA) process.on('disconnect', () => process.exit(0));
// Imported for its config type and names too: only a forked replica (its config set) runs.
if (process.env.HOLDFAST_FLEET_REPLICA)
  main().catch((error) => {
    const e = error as { code?: unknown; message?: string };
    send({
      t: 'failed',
      code: typeof e.code === 'string' ? e.code : undefined,
      message: String(e.message ?? error),
    });
    setTimeout(() => process.exit(1), 100);
  });
