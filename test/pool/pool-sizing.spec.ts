/**
 * Pool sizing across modules: an application with all four Holdfast modules on one DataSource is
 * told at startup (once, or twice when a module declared later raises the size), when the pool cannot hold what the modules may take at once plus one
 * connection for its own work (README: Pool sizing); a pool that is large enough, and SQLite's
 * single connection, give no such warning. Since #31 Simba, the inbox's deliveries and the
 * lockers run on connections of Holdfast's own (#43: one lane for every lease statement, one per
 * delivering inbox, opened together within the process's connection budget): of the application's
 * pool only the failover store takes a share.
 */
import { Injectable, Logger, type INestApplicationContext } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import type { DataSource, DataSourceOptions } from 'typeorm';
import { ConnectionBudget, tableName } from '@holdfast/core/kit';
import { configuredPoolSize } from '../../libs/core/src/database/pool-budget';
import {
  createTestDataSource,
  testDatabases,
  testDataSourceOptions,
  uniqueTablePrefix,
  waitUntil,
} from '@holdfast/testing';
import { FailoverModule, FAILOVER_TABLES } from '@holdfast/failover';
import { InboxHandler, InboxModule, INBOX_TABLES } from '@holdfast/inbox';
import { InboxConnection } from '@holdfast/inbox/internal';
import { LockerModule, LOCKER_TABLES } from '@holdfast/locker';
import { LockerDatabase } from '../../libs/locker/src/service/locker-database';
import { SimbaModule, SIMBA_TABLES } from '@holdfast/simba';
import { SimbaConnection } from '../../libs/simba/src/mutex/simba-connection';

@Injectable()
class Handler {
  @InboxHandler({ namespace: 'pool', name: 'noop' })
  handle(): void {}
}

async function boot(db: ReturnType<typeof testDatabases>[number], prefix: string, poolSize: number) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot(testDataSourceOptions(db, { poolSize }) as DataSourceOptions),
      ScheduleModule.forRoot(),
      SimbaModule.forRoot({ tablePrefix: prefix, schema: 'create' }),
      InboxModule.forRoot({ tablePrefix: prefix, schema: 'create' }),
      FailoverModule.forRoot({ store: { type: 'sql', tablePrefix: prefix, schema: 'create' } }),
      LockerModule.forRoot({
        tablePrefix: prefix,
        schema: 'create',
        locker: { type: 'lease-database' },
        startup: 'background',
      }),
    ],
    providers: [Handler],
  }).compile();
  const app: INestApplicationContext = await moduleRef.init();
  // The budget is checked on the turn after the last module declared its need.
  await new Promise((resolve) => setImmediate(resolve));
  return app;
}

const poolWarnings = (warn: jest.SpyInstance) =>
  warn.mock.calls.map((c) => String(c[0])).filter((w) => w.includes("Holdfast's modules on it may hold"));

describe.each(testDatabases())('pool sizing across the modules [%s]', (db) => {
  const prefix = uniqueTablePrefix(`pool_${db}`);
  let warn: jest.SpyInstance;
  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn');
  });
  afterEach(() => warn.mockRestore());
  afterAll(async () => {
    const dataSource = await createTestDataSource(db);
    for (const spec of [
      SIMBA_TABLES.mutex,
      INBOX_TABLES.message,
      INBOX_TABLES.lease,
      FAILOVER_TABLES.store,
      LOCKER_TABLES.lock,
    ]) {
      await dataSource.query(`DROP TABLE IF EXISTS ${tableName(prefix, spec.name)}`).catch(() => undefined);
    }
    await dataSource.destroy();
  });

  if (db === 'sqlite') {
    it('SQLite has one connection that every statement takes in turn: no pool warning', async () => {
      const app = await boot(db, prefix, 1);
      try {
        expect(poolWarnings(warn)).toEqual([]);
      } finally {
        await app.close();
      }
    });
    return;
  }

  it("a pool of 1 under simba, inbox, failover and a lease locker: one warning naming the failover store's share only", async () => {
    const app = await boot(db, prefix, 1);
    try {
      await waitUntil(() => poolWarnings(warn).length > 0, { timeout: 10_000, message: 'the pool warning' });
      const warnings = poolWarnings(warn);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('pool has 1 connection(s)');
      expect(warnings[0]).toMatch(/failover \([^)]*FAILOVER_STORE\): 1/);
      expect(warnings[0]).not.toMatch(/simba|inbox|locker/);
      expect(warnings[0]).toContain('Raise poolSize to at least 2');
    } finally {
      await app.close();
    }
  });

  it("a pool of 2 leaves the application one: no warning; Holdfast's own connections are one per lane, the lease lane shared", async () => {
    const app = await boot(db, prefix, 2);
    try {
      expect(poolWarnings(warn)).toEqual([]);
      const application = app.get<DataSource>(getDataSourceToken() as never, { strict: false });
      const inbox = app.get(InboxConnection, { strict: false }).sql.dataSource;
      const simba = app.get(SimbaConnection, { strict: false }).sql.dataSource;
      const locker = app.get(LockerDatabase, { strict: false }).sql.dataSource;
      expect(inbox).not.toBe(application);
      // The claims and completions on the inbox's lane; Simba's rounds, the lease lock and the
      // inbox's heartbeats share the lease lane.
      expect(simba).toBe(locker);
      expect(inbox).not.toBe(simba);
      expect([configuredPoolSize(inbox), configuredPoolSize(simba)]).toEqual([1, 1]);
      // And on PostgreSQL the inbox's LISTEN: 3 connections of Holdfast's own in all (2 on MariaDB).
      expect(ConnectionBudget.existing(application)!.total).toBe(db === 'postgres' ? 3 : 2);
    } finally {
      await app.close();
    }
  });
});
