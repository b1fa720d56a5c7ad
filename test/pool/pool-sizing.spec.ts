/**
 * Pool sizing across modules: an application with all four Holdfast modules on one DataSource is
 * told at startup (once, or twice when a module declared later raises the size), when the pool cannot hold what the modules may take at once plus one
 * connection for its own work (README: Pool sizing); a pool that is large enough, and SQLite's
 * single connection, give no such warning.
 */
import { Injectable, Logger, type INestApplicationContext } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { DataSourceOptions } from 'typeorm';
import { tableName } from '@holdfast/core/kit';
import {
  createTestDataSource,
  testDatabases,
  testDataSourceOptions,
  uniqueTablePrefix,
  waitUntil,
} from '@holdfast/core/testing';
import { FailoverModule } from '@holdfast/failover';
import { FAILOVER_STORE_TABLE } from '@holdfast/failover/internal';
import { InboxHandler, InboxModule } from '@holdfast/inbox';
import { COR_MESSAGE_TABLE, INBOX_LEASE_TABLE } from '@holdfast/inbox/internal';
import { LockerModule } from '@holdfast/locker';
import { HOLDFAST_LOCK_TABLE } from '@holdfast/locker/internal';
import { SimbaModule } from '@holdfast/simba';
import { SIMBA_MUTEX_TABLE } from '@holdfast/simba/internal';

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
      SIMBA_MUTEX_TABLE,
      COR_MESSAGE_TABLE,
      INBOX_LEASE_TABLE,
      FAILOVER_STORE_TABLE,
      HOLDFAST_LOCK_TABLE,
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

  it('a pool of 4 under simba, inbox, failover and a lease locker: one warning naming each share', async () => {
    const app = await boot(db, prefix, 4);
    try {
      // Modules start one after another: a warning as soon as the pool is short, and a complete one
      // once the last module (here the locker, or another) has declared its share.
      await waitUntil(() => poolWarnings(warn).some((w) => w.includes('at least 6')), {
        timeout: 10_000,
        message: 'the complete pool warning',
      });
      const warnings = poolWarnings(warn);
      expect(warnings.length).toBeLessThanOrEqual(2);
      const warning = warnings[warnings.length - 1];
      expect(warning).toContain('pool has 4 connection(s)');
      expect(warning).toMatch(/locker '[^']+': 1 \(kept for as long as the application runs\)/);
      expect(warning).toMatch(/simba \([^)]*simba_mutex\): 1/);
      expect(warning).toMatch(/inbox \([^)]*COR_MESSAGE\): 2/);
      expect(warning).toMatch(/failover \([^)]*FAILOVER_STORE\): 1/);
      expect(warning).toContain('Raise poolSize to at least 6');
    } finally {
      await app.close();
    }
  });

  it('a pool of 6 leaves the application one: no warning', async () => {
    const app = await boot(db, prefix, 6);
    try {
      expect(poolWarnings(warn)).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
