/**
 * One replica of an ordinary Holdfast app for the rolling-deploy test, built the way a user
 * builds one: TypeORM through @nestjs/typeorm, `schema: 'create'` everywhere, and
 * `enableShutdownHooks()`, so SIGTERM runs Nest's shutdown and nothing else.
 * - Simba: `@OnMutexAcquired`/`@OnMutexReleased` write the grants (database clock, fencing token)
 *   to the shared history; a `@LeaderOnly` `@Interval` job writes each run to the jobs file.
 * - Inbox (its default cluster mode: competing where the database has SKIP LOCKED, the Simba
 *   leader delivers on SQLite): an `@InboxHandler` writes each run to the history.
 * - Failover: a `@Failover` method whose upstream fails when the caller asks it to.
 * - Fencing (when FENCED_WORK_MS is set): each leader job run also does a piece of work that
 *   takes FENCED_WORK_MS and then writes the user's own table `<prefix>deploy_ledger` (made by the
 *   test) through `fenced()` with the token it started under; each write's outcome, with the time
 *   it was sent, goes to `<jobsFile>.fenced`.
 * - Locker (when APP_LOCKER_INTERVAL_MS is set): a lease-database LockerModule on the same
 *   DataSource, lock 'app-master', that interval; acquired/lost go to the history as locker
 *   master/demote, and a `work` event every 200 ms while it is master.
 * - SIMBA_TTL_MS / SIMBA_TRANSITION_MS, when set, replace Simba's ttl and transition.
 * IPC in: {t:'accept', id}, {t:'failover', seq, key, fail}, {t:'clock'}, {t:'readiness'}, {t:'locker'},
 * {t:'hog', until} (other work that keeps every pool connection busy until the epoch ms `until`:
 * one slow statement per pool connection, each issued again until then). IPC out: {t:'ready'},
 * {t:'accept-done', id, error?}, {t:'failover-done', seq, fresh, error?}, {t:'clock', wall, real}
 * (its Date.now() and the time the history uses), {t:'readiness', ready} (the failover health
 * indicator, as a readiness probe reads it), {t:'locker', role, lastKeepAlive?, lastError?},
 * {t:'hog-done', statements, errors},
 * Its last shutdown hook appends {proc, signal, inboxRetries, runningAtShutdown} to `<jobsFile>.shutdown`.
 * argv: <db> <tablePrefix> <historyFile> <jobsFile> <proc> <standbyPoll ms> [sqlite file]
 */
import 'reflect-metadata';
import { appendFileSync } from 'node:fs';
import { Injectable, Module, type OnApplicationShutdown, type OnModuleDestroy } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Interval, ScheduleModule } from '@nestjs/schedule';
import { InjectRepository, TypeOrmModule } from '@nestjs/typeorm';
import { Column, DataSource, Entity, PrimaryColumn, type Repository } from 'typeorm';
import { tableName } from '@holdfast/core/kit';
import { testDataSourceOptions, type TestDatabase } from '@holdfast/testing';
import { Failover, FailoverHealthIndicator, FailoverModule, Referential } from '@holdfast/failover';
import { InboxHandler, InboxMetrics, InboxModule, MessageAcceptor, type InboxMessage } from '@holdfast/inbox';
import { LockerModule, LockerService, OnLockAcquired, OnLockLost } from '@holdfast/locker';
import {
  FenceColumn,
  fenced,
  LeaderOnly,
  MutexContendRegistry,
  OnMutexAcquired,
  OnMutexReleased,
  SimbaModule,
  type MutexState,
} from '@holdfast/simba';
import { HistoryWriter } from '../../../tools/history/history';

const [db, prefix, historyFile, jobsFile, proc, standbyPoll, sqliteFile] = process.argv.slice(2);
const LEADER_MUTEX = 'deploy-leader';
const send = (message: unknown) => process.connected && process.send?.(message);
const history = new HistoryWriter(historyFile, proc);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const FENCED_WORK_MS = Number(process.env.FENCED_WORK_MS ?? 0);
const LOCKER_INTERVAL_MS = Number(process.env.APP_LOCKER_INTERVAL_MS ?? 0);
const LOCKER_LOCK = 'app-master';
const POOL_SIZE = 6;

/** The protected resource: a user's own table, one row, written only under a current token. */
@Entity({ name: tableName(prefix, 'deploy_ledger') })
class Ledger {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id!: string;

  @Column({ type: 'varchar', length: 16 })
  writer!: string;

  @FenceColumn()
  fence?: number | null;
}
/**
 * The history's times for inbox and failover events: the wall clock as it was at startup, moved on
 * by the monotonic clock, so a wall-clock jump of this process (the clock-jump test) does not
 * move them.
 */
const realNow = () => Math.round(performance.timeOrigin + performance.now());

@Injectable()
class LeaderJob {
  private token?: number;

  constructor(
    private readonly registry: MutexContendRegistry,
    @InjectRepository(Ledger) private readonly ledger: Repository<Ledger>,
  ) {}

  @OnMutexAcquired(LEADER_MUTEX)
  acquired(state: MutexState): void {
    const row = state.after;
    this.token = row.fencingToken;
    history.append({
      kind: 'simba',
      op: 'acquire',
      mutex: LEADER_MUTEX,
      token: row.fencingToken,
      at: row.acquiredAt,
      acquiredAt: row.acquiredAt,
      ttlAt: row.ttlAt,
      transitionAt: row.transitionAt,
    });
  }

  @OnMutexReleased(LEADER_MUTEX)
  released(state: MutexState): void {
    // Runs after the process stepped down and before the row is released: the database clock
    // now (estimated from the last reading) is a time at which it no longer believed it owned.
    // Nor did it after its last grant's transition_at (its local deadline ends before that), which
    // is the earlier of the two when the process was paused past its deadline and woke up.
    const service = this.registry.get(LEADER_MUTEX)!;
    const now = Math.round(service.afterOwner.estimatedDatabaseNow());
    const deadline = state.before.transitionAt;
    history.append({
      kind: 'simba',
      op: 'release',
      mutex: LEADER_MUTEX,
      token: this.token,
      at: Number.isFinite(deadline) && deadline > 0 ? Math.min(now, deadline) : now,
    });
    this.token = undefined;
  }

  /** The leader's job: runs only on the owner; writes its fencing token and the database time. */
  @Interval(100)
  @LeaderOnly(LEADER_MUTEX)
  tick(): void {
    const service = this.registry.get(LEADER_MUTEX)!;
    const token = service.fencingToken;
    if (token === undefined) return;
    const row = service.afterOwner;
    const at = Math.round(row.estimatedDatabaseNow());
    if (this.token !== undefined && token !== this.token) {
      history.append({
        kind: 'simba',
        op: 'renew',
        mutex: LEADER_MUTEX,
        token,
        at: row.acquiredAt,
        acquiredAt: row.acquiredAt,
        ttlAt: row.ttlAt,
        transitionAt: row.transitionAt,
      });
      this.token = token;
    }
    appendFileSync(jobsFile, `${JSON.stringify({ proc, token, at })}\n`);
    if (FENCED_WORK_MS > 0) void this.fencedWrite(token);
  }

  /**
   * The job's work, then its write to the ledger under the token it started with: a process
   * paused in between wakes up and sends the write with a token a newer owner has overtaken.
   */
  private async fencedWrite(token: number): Promise<void> {
    await sleep(FENCED_WORK_MS);
    const sentAt = realNow();
    const outcome = await fenced(this.ledger)
      .update({ id: 'ledger' }, { writer: proc }, token)
      .then(
        (result) => ({ accepted: result.accepted }),
        (error: Error) => ({ error: `${error.name}: ${error.message}` }),
      );
    appendFileSync(
      `${jobsFile}.fenced`,
      `${JSON.stringify({ proc, token, sentAt, at: realNow(), ...outcome })}\n`,
    );
  }
}

/** Handler runs in progress, and how many were when the shutdown began. */
let running = 0;
let runningAtShutdown: number | undefined;

@Injectable()
class ItemHandler implements OnModuleDestroy {
  @InboxHandler({ namespace: 'deploy', name: 'item' })
  async handle(message: InboxMessage): Promise<void> {
    history.append({ kind: 'inbox', op: 'deliver', id: message.id, at: realNow() });
    running++;
    try {
      // A handler that takes a moment, so SIGTERM often finds one running.
      await sleep(50 + Math.random() * 150);
    } finally {
      running--;
    }
  }

  /** The first shutdown hook (before the inbox drains): how many handlers run right now. */
  onModuleDestroy(): void {
    runningAtShutdown = running;
  }
}

/** The locker's master terms (only when APP_LOCKER_INTERVAL_MS is set). */
@Injectable()
class MasterWork {
  constructor(private readonly locker: LockerService) {}

  @OnLockAcquired()
  acquired(): void {
    history.append({ kind: 'locker', op: 'master', lock: LOCKER_LOCK, at: realNow() });
  }

  @OnLockLost()
  lost(): void {
    history.append({ kind: 'locker', op: 'demote', lock: LOCKER_LOCK, at: realNow() });
  }

  /** The master's work: only while it believes it is master. */
  @Interval(200)
  tick(): void {
    if (this.locker.isMaster)
      history.append({ kind: 'locker', op: 'work', lock: LOCKER_LOCK, at: realNow() });
  }
}

class Quote extends Referential {
  constructor(
    readonly key: string,
    readonly at: number,
  ) {
    super();
  }
}

@Injectable()
class QuoteClient {
  /** Stored under the key alone: `fail` is the test's switch for the upstream, not part of the question. */
  @Failover({
    name: 'deploy-quote',
    expiry: '1h',
    type: Quote,
    keyGenerator: { key: (args) => String(args[0]) },
  })
  async quote(key: string, fail: boolean): Promise<Quote> {
    if (fail) throw new Error(`upstream down for ${key}`);
    return new Quote(key, Date.now());
  }
}

/** Read once the app is built (InboxMetrics is not exported to the app's module). */
let inboxMetrics: InboxMetrics | undefined;

@Injectable()
class ShutdownReport implements OnApplicationShutdown {
  onApplicationShutdown(signal?: string): void {
    // A file, not IPC: Nest raises the signal again right after this hook, which may drop a message.
    const line = { proc, signal, inboxRetries: inboxMetrics?.retriedStatements, runningAtShutdown };
    appendFileSync(`${jobsFile}.shutdown`, `${JSON.stringify(line)}\n`);
  }
}

async function main(): Promise<void> {
  @Module({
    imports: [
      TypeOrmModule.forRoot({
        ...testDataSourceOptions(db as TestDatabase, {
          poolSize: POOL_SIZE,
          sqliteFile: sqliteFile || undefined,
        }),
        // SQLite: a busy timeout below Simba's transition, as SimbaConnection asks at startup.
        ...(db === 'sqlite' ? { timeout: 3_000 } : {}),
        entities: [Ledger],
      }),
      TypeOrmModule.forFeature([Ledger]),
      ScheduleModule.forRoot(),
      SimbaModule.forRoot({
        tablePrefix: prefix,
        schema: 'create',
        standbyPoll: Number(standbyPoll),
        ...(process.env.SIMBA_TTL_MS ? { ttl: Number(process.env.SIMBA_TTL_MS) } : {}),
        ...(process.env.SIMBA_TRANSITION_MS ? { transition: Number(process.env.SIMBA_TRANSITION_MS) } : {}),
      }),
      InboxModule.forRoot({
        tablePrefix: prefix,
        schema: 'create',
        pollInterval: '200ms',
        batchSize: 10,
      }),
      FailoverModule.forRoot({ store: { type: 'sql', tablePrefix: prefix, schema: 'create' } }),
      ...(LOCKER_INTERVAL_MS > 0
        ? [
            LockerModule.forRoot({
              tablePrefix: prefix,
              schema: 'create',
              locker: { type: 'lease-database' },
              lockName: LOCKER_LOCK,
              lockAcquireSleepInterval: LOCKER_INTERVAL_MS,
              startup: 'background',
            }),
          ]
        : []),
    ],
    providers: [
      LeaderJob,
      ItemHandler,
      QuoteClient,
      ShutdownReport,
      ...(LOCKER_INTERVAL_MS > 0 ? [MasterWork] : []),
    ],
  })
  class RollingAppModule {}

  const app = await NestFactory.createApplicationContext(RollingAppModule, {
    logger: ['error', 'warn', 'log'],
    abortOnError: false,
  });
  inboxMetrics = app.get(InboxMetrics);
  app.enableShutdownHooks();
  const acceptor = app.get(MessageAcceptor);
  const quotes = app.get(QuoteClient);
  const health = app.get(FailoverHealthIndicator);

  process.on(
    'message',
    (m: { t: string; id?: string; seq?: number; key?: string; fail?: boolean; until?: number }) => {
      if (m.t === 'accept') {
        acceptor
          .accept({ id: m.id, type: { namespace: 'deploy', name: 'item' }, payload: { id: m.id } })
          .then(
            (result) => {
              if (result.accepted) history.append({ kind: 'inbox', op: 'accept', id: m.id!, at: realNow() });
              send({ t: 'accept-done', id: m.id, accepted: result.accepted });
            },
            (error: Error) => send({ t: 'accept-done', id: m.id, error: `${error.name}: ${error.message}` }),
          );
      } else if (m.t === 'readiness') {
        void health
          .isHealthy()
          .then((result) => send({ t: 'readiness', ready: result.failover.status === 'up' }));
      } else if (m.t === 'clock') {
        send({ t: 'clock', wall: Date.now(), real: realNow() });
      } else if (m.t === 'locker') {
        const locker = LOCKER_INTERVAL_MS > 0 ? app.get(LockerService) : undefined;
        const lastError = locker?.lastError;
        send({
          t: 'locker',
          role: locker?.role,
          lastKeepAlive: locker?.lastKeepAlive?.getTime(),
          ...(lastError === undefined ? {} : { lastError: String(lastError) }),
        });
      } else if (m.t === 'hog') {
        void hogPool(app.get(DataSource), m.until!).then((result) => send({ t: 'hog-done', ...result }));
      } else if (m.t === 'failover') {
        quotes.quote(m.key!, !!m.fail).then(
          (quote) => {
            const fresh = quote.upToDate !== false;
            const asOf = quote.asOf?.getTime();
            history.append({
              kind: 'failover',
              op: 'answer',
              name: 'deploy-quote',
              key: m.key,
              fresh,
              at: realNow(),
              ...(fresh ? {} : { asOf, expiry: 3_600_000 }),
            });
            send({ t: 'failover-done', seq: m.seq, fresh });
          },
          (error: Error) =>
            send({ t: 'failover-done', seq: m.seq, error: `${error.name}: ${error.message}` }),
        );
      }
    },
  );
  send({ t: 'ready', pid: process.pid });
}

/**
 * Other work on the app's DataSource that keeps every pool connection busy until `until`: one
 * slow statement per pool connection (pg_sleep / SLEEP for the time left), each issued again when
 * it returns early, so whatever else needs a pooled connection queues behind it until then.
 */
async function hogPool(
  dataSource: DataSource,
  until: number,
): Promise<{ statements: number; errors: number }> {
  let statements = 0;
  let errors = 0;
  // The time left is worked out by the server when the statement starts, so a statement that
  // waited for its connection still ends at `until` (the server shares this host's clock).
  const sleepSql =
    db === 'postgres'
      ? `SELECT pg_sleep(GREATEST(0, ${until / 1000} - extract(epoch from clock_timestamp())))`
      : `SELECT SLEEP(GREATEST(0, ${until / 1000} - UNIX_TIMESTAMP(NOW(6))))`;
  await Promise.all(
    Array.from({ length: POOL_SIZE }, async () => {
      for (let left = until - Date.now(); left > 20; left = until - Date.now()) {
        statements++;
        await dataSource.query(sleepSql).catch(async () => {
          errors++;
          await sleep(Math.min(100, Math.max(0, until - Date.now())));
        });
      }
    }),
  );
  return { statements, errors };
}

main().catch((error) => {
  send({ t: 'failed', error: String((error as Error)?.stack ?? error) });
  console.error(error);
  process.exit(1);
});
