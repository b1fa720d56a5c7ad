import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { sqlClientFor, type SqlClient, statement } from '@holdfast/core/kit';
import { createTestDataSource, testDatabases, uniqueTablePrefix } from '@holdfast/testing';
import {
  defaultContenderId,
  MutexContendServiceFactory,
  SimbaModule,
  type MutexContendService,
  type MutexState,
} from '@holdfast/simba';
import type { DataSource } from 'typeorm';
import { SlowSilentProxy } from '../inbox/support/slow-silent-proxy';

const TTL_MS = 2_000;
const TRANSITION_MS = 2_000;
/**
 * The server's bound on the owner's silent transaction. PostgreSQL: Simba sets the transaction's
 * idle_in_transaction_session_timeout to its statementTimeout (transition / 3 by default), under
 * core's bound; MariaDB: the bound Simba gives its client, max(1 s, statementTimeout), in whole seconds.
 */
const boundMs = (db: 'postgres' | 'mariadb') =>
  db === 'postgres'
    ? Math.floor(TRANSITION_MS / 3)
    : Math.ceil(Math.max(1_000, TRANSITION_MS / 3) / 1_000) * 1_000;

const databases = testDatabases().filter((db): db is 'postgres' | 'mariadb' => db !== 'sqlite');

class Recorder {
  readonly acquired: { at: number; token: number }[] = [];
  readonly released: number[] = [];
  constructor(
    readonly mutex: string,
    readonly contenderId = defaultContenderId(),
  ) {}
  onAcquired(state: MutexState): void {
    this.acquired.push({ at: Date.now(), token: state.fencingToken });
  }
  onReleased(): void {
    this.released.push(Date.now());
  }
}

async function simbaApp(dataSource: DataSource, prefix: string): Promise<INestApplicationContext> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      SimbaModule.forRoot({
        dataSource,
        tablePrefix: prefix,
        schema: 'create',
        ttl: TTL_MS,
        transition: TRANSITION_MS,
        standbyPoll: '100ms',
      }),
    ],
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

/** Whether a proxied connection has a transaction open on the server that holds row locks. */
async function holdsRowLocks(
  sql: SqlClient,
  proxy: SlowSilentProxy,
  anyTransaction = false,
): Promise<boolean> {
  if (sql.dialect.name === 'postgres') {
    const ports = [...proxy.upstreamPorts];
    const [row] = await sql.query<{ n: unknown }>(
      statement(
        `SELECT COUNT(*) AS n FROM pg_stat_activity WHERE client_port = ANY($1) AND ` +
          (anyTransaction ? 'xact_start IS NOT NULL' : 'backend_xid IS NOT NULL'),
        [ports],
      ),
    );
    return Number(row.n) > 0;
  }
  // information_schema.innodb_trx was seen empty on MariaDB 10.11 while transactions held locks.
  const [status] = await sql.query<{ Status: string }>(statement('SHOW ENGINE INNODB STATUS'));
  return status.Status.split(/^---TRANSACTION /m)
    .slice(1)
    .some((block) => {
      const thread = /(?:MariaDB|MySQL) thread id (\d+)/.exec(block);
      if (!thread || !proxy.connectionIds.has(Number(thread[1])) || !/^[^\n]*ACTIVE/.test(block))
        return false;
      return anyTransaction || Number(/(\d+) row lock\(s\)/.exec(block)?.[1] ?? 0) > 0;
    });
}

/**
 * #19: a Simba owner frozen inside its renewal, after its UPDATE of the mutex row reached the
 * server (the client's sockets open and silent). The renewal is one message with its COMMIT
 * (PostgreSQL: one statement, its own transaction; MariaDB: one compound statement with the
 * transaction's opening and COMMIT), so the server finishes it and no transaction stays open
 * behind the frozen owner; the mutex changes hands within ttl + transition + the bound.
 */
// Server databases only (SQLite has no server to end a transaction): jest.config.js leaves this
// suite out of a SQLite-only run.
describe('Simba owner frozen inside its renewal', () => {
  it.each(databases)(
    '[%s] the mutex changes hands within ttl + transition + the bound',
    async (db) => {
      const url = new URL(
        db === 'postgres'
          ? (process.env.HOLDFAST_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test')
          : (process.env.HOLDFAST_TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test'),
      );
      const proxy = new SlowSilentProxy(Number(url.port || (db === 'postgres' ? 5432 : 3306)), 0);
      await proxy.start();
      const prefix = uniqueTablePrefix(`frozen_${db}`);
      const direct = await createTestDataSource(db);
      const watcher = sqlClientFor(direct);
      const viaProxy = await createTestDataSource(db, { port: proxy.port, poolSize: 2 });
      const services: MutexContendService[] = [];
      let ownerApp: INestApplicationContext | undefined;
      let standbyApp: INestApplicationContext | undefined;
      try {
        ownerApp = await simbaApp(viaProxy, prefix);
        standbyApp = await simbaApp(direct, prefix);
        const mutex = `frozen-${process.pid}-${Date.now()}`;
        const owner = new Recorder(mutex);
        const standby = new Recorder(mutex);
        const ownerService = ownerApp.get(MutexContendServiceFactory).createMutexContendService(owner);
        const standbyService = standbyApp.get(MutexContendServiceFactory).createMutexContendService(standby);
        services.push(ownerService, standbyService);
        ownerService.start();
        const bootDeadline = Date.now() + 15_000;
        while (!owner.acquired.length && Date.now() < bootDeadline)
          await new Promise((r) => setTimeout(r, 20));
        expect(owner.acquired).toHaveLength(1);
        standbyService.start();

        // The owner's next UPDATE of the mutex row (its renewal) reaches the server; then silence.
        await proxy.silenceAfter(`UPDATE ${prefix}simba_mutex SET owner_id = `);
        const frozenAt = Date.now();
        // The renewal's row lock, if the server is still running it (logged, not asserted: the
        // server finishes the renewal by itself, sooner or later than the first look).
        let held = false;
        while (!held && Date.now() - frozenAt < 2_000) held = await holdsRowLocks(watcher, proxy);
        // The server ends it within the bound.
        let endedAfter = -1;
        const bound = boundMs(db);
        while (Date.now() - frozenAt < bound + 30_000) {
          if (!(await holdsRowLocks(watcher, proxy, true))) {
            endedAfter = Date.now() - frozenAt;
            break;
          }
          await new Promise((r) => setTimeout(r, 100));
        }
        const handDeadline = frozenAt + TTL_MS + TRANSITION_MS + bound + 30_000;
        while (!standby.acquired.length && Date.now() < handDeadline)
          await new Promise((r) => setTimeout(r, 50));
        const handedAfter = standby.acquired.length ? standby.acquired[0].at - frozenAt : -1;
        console.log(
          `[simba frozen renewal ${db}] row lock seen: ${held}; server ended the owner's transaction after ` +
            `${endedAfter} ms (bound ${bound} ms); standby acquired after ${handedAfter} ms ` +
            `(ttl ${TTL_MS} + transition ${TRANSITION_MS} + bound ${bound} ms)`,
        );
        expect(endedAfter).toBeGreaterThanOrEqual(0);
        expect(endedAfter).toBeLessThanOrEqual(bound + 5_000);
        expect(handedAfter).toBeGreaterThan(0);
        // Generous margin for a busy machine: polling, the standby's own statement timeouts.
        expect(handedAfter).toBeLessThanOrEqual(TTL_MS + TRANSITION_MS + bound + 10_000);
        expect(standby.acquired[0].token).toBeGreaterThan(owner.acquired[0].token);
      } finally {
        await proxy.stop();
        await Promise.all(
          services.map((s) => (s.status === 'RUNNING' ? s.stop().catch(() => undefined) : undefined)),
        );
        await Promise.race([ownerApp?.close(), new Promise((r) => setTimeout(r, 10_000))]).catch(
          () => undefined,
        );
        await standbyApp?.close();
        await direct.query(`DROP TABLE IF EXISTS ${prefix}simba_mutex`).catch(() => undefined);
        await viaProxy.destroy().catch(() => undefined);
        await direct.destroy();
      }
    },
    180_000,
  );
});
