/**
 * #31, #43: a module's statements run on connections of Holdfast's own (HoldfastDatabase's
 * coordination lanes), opened from the application's DataSource options: they go through while
 * every connection of the application's pool is busy; the modules of a process share one budget
 * per DataSource (one connection per lane, the lease lane shared by every module whose statements
 * are leases); its connections are opened all at once and kept; `coordinationPool: false` keeps
 * a module on the application's pool; a lane closes when its last module shuts down. SQLite has
 * one connection and no pool: the module uses it.
 */
import {
  ConnectionBudget,
  configureCoordinationPool,
  CoordinationPool,
  declarePoolNeed,
  InvalidOptionsError,
  type CoordinationLane,
  type HoldfastDatabaseOptions,
} from '@holdfast/core/kit';
import { createTestDataSource, describeEachDatabase } from '@holdfast/testing';
import { ModuleDatabase } from './support/module-database';
import { configuredPoolSize } from '../src/database/pool-budget';

/** Connections the lane's driver pool has open now (idle or checked out). */
function openConnections(dataSource: { driver: unknown }): number {
  const driver = dataSource.driver as {
    master?: { totalCount?: number };
    pool?: { _allConnections?: { length?: number; toArray?: () => unknown[] } };
  };
  if (driver.master) return driver.master.totalCount ?? 0;
  const all = driver.pool?._allConnections;
  return all?.toArray ? all.toArray().length : (all?.length ?? 0);
}

describeEachDatabase(
  'coordination lanes',
  (ctx) => {
    const server = () => ctx.db !== 'sqlite';
    const sleepSql = () => (ctx.db === 'postgres' ? 'SELECT pg_sleep(1.5)' : 'SELECT SLEEP(1.5)');
    const databases: ModuleDatabase[] = [];
    const database = (options: Partial<HoldfastDatabaseOptions> = {}, lane?: CoordinationLane) => {
      const made = new ModuleDatabase({ dataSource: ctx.dataSource, ...options }, lane);
      databases.push(made);
      return made;
    };
    afterEach(async () => {
      for (const made of databases.splice(0)) await made.onApplicationShutdown();
    });

    it("runs the module's statements while the application's pool is all busy", async () => {
      const module = database();
      await module.sql.nowMillis();
      if (!server()) {
        expect(module.sql.dataSource).toBe(ctx.dataSource);
        return;
      }
      expect(module.sql.dataSource).not.toBe(ctx.dataSource);
      // Every connection of the application's pool of 2 sleeps; the module's read does not wait for one.
      let slept = 0;
      const busy = [0, 1].map(() => ctx.dataSource.query(sleepSql()).then(() => slept++));
      await new Promise((resolve) => setTimeout(resolve, 200));
      await module.sql.nowMillis();
      await module.sql.transaction((tx) => tx.nowMillis());
      expect(slept).toBe(0);
      await Promise.all(busy);
      // The application's own work (the inbox's accepts) stays on the application's pool.
      expect(module.application.dataSource).toBe(ctx.dataSource);
    });

    it('shares one lease lane between modules, gives another lane its own connection, and opens them all at once', async () => {
      const dataSource = await createTestDataSource(ctx.db, { poolSize: 2 });
      try {
        const simba = database({ dataSource });
        const locker = database({ dataSource });
        const inbox = database({ dataSource }, { key: 'inbox:T', what: 'inbox T' });
        const [a, b, c] = [simba.sql, locker.sql, inbox.sql];
        if (!server()) {
          expect([a, b, c].every((s) => s.dataSource === dataSource)).toBe(true);
          return;
        }
        expect(a.dataSource).toBe(b.dataSource);
        expect(c.dataSource).not.toBe(a.dataSource);
        // Nothing is open before the first statement (or the bootstrap's admission) ...
        expect(a.dataSource.isInitialized || c.dataSource.isInitialized).toBe(false);
        await simba.sql.nowMillis();
        // ... and then every lane is, with its one connection, kept.
        expect(c.dataSource.isInitialized).toBe(true);
        expect([openConnections(a.dataSource), openConnections(c.dataSource)]).toEqual([1, 1]);
        expect(configuredPoolSize(a.dataSource)).toBe(1);
        const budget = ConnectionBudget.existing(dataSource)!;
        expect(budget.total).toBe(2);
        expect(budget.shares.map((s) => s.what)).toEqual([
          expect.stringMatching(/^lease statements/),
          'inbox T',
        ]);
        // Declared needs no longer size a lane (they size the application's pool where modules share it).
        declarePoolNeed(a, { component: 'many', connections: 3 });
        expect(configuredPoolSize(a.dataSource)).toBe(1);
        // The lease lane closes when its last module gives it back.
        await simba.onApplicationShutdown();
        expect(a.dataSource.isInitialized).toBe(true);
        await locker.onApplicationShutdown();
        expect(a.dataSource.isInitialized).toBe(false);
        expect(c.dataSource.isInitialized).toBe(true);
      } finally {
        await dataSource.destroy();
      }
    });

    it('keeps its connections open while idle (an instance that booted never needs one a newcomer could take)', async () => {
      if (!server()) return;
      // The application's pool closes idle connections after 300 ms; a lane does not.
      const dataSource = await createTestDataSource(ctx.db, {
        poolSize: 2,
        extra: ctx.db === 'postgres' ? { idleTimeoutMillis: 300 } : { idleTimeout: 300, maxIdle: 0 },
      });
      try {
        const module = database({ dataSource });
        await module.sql.nowMillis();
        const lane = module.sql.dataSource;
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        expect(openConnections(lane)).toBe(1);
      } finally {
        await dataSource.destroy();
      }
    });

    it('takes a configured size for each lane, and coordinationPool: false keeps the module on the application pool', async () => {
      const dataSource = await createTestDataSource(ctx.db, { poolSize: 2 });
      try {
        configureCoordinationPool(dataSource, { size: 2 });
        const sized = database({ dataSource });
        const off = database({ coordinationPool: false });
        await off.sql.nowMillis();
        expect(off.sql.dataSource).toBe(ctx.dataSource);
        if (!server()) return;
        await sized.sql.nowMillis();
        expect(configuredPoolSize(sized.sql.dataSource)).toBe(2);
        expect(openConnections(sized.sql.dataSource)).toBe(2);
      } finally {
        await dataSource.destroy();
      }
    });

    it('refuses bad options, naming the option and the value', () => {
      expect(() => database({ coordinationPool: { size: 0 } }).sql).toThrow(InvalidOptionsError);
      expect(() => database({ coordinationPool: { size: 1.5 } }).sql).toThrow(/coordinationPool.size/);
      expect(() => configureCoordinationPool(ctx.dataSource, { size: -1 })).toThrow(InvalidOptionsError);
      expect(() => configureCoordinationPool(ctx.dataSource, { whenServerFull: 'queue' as 'wait' })).toThrow(
        /whenServerFull must be 'fail' or 'wait', got "queue"/,
      );
      expect(() => configureCoordinationPool(ctx.dataSource, { serverFullWait: 'soon' })).toThrow(
        /serverFullWait.*"soon"/,
      );
    });

    it('configureCoordinationPool sets it for every module on a DataSource; a module option wins', async () => {
      const dataSource = await createTestDataSource(ctx.db);
      try {
        configureCoordinationPool(dataSource, false);
        const shared = database({ dataSource });
        await shared.sql.nowMillis();
        expect(shared.sql.dataSource).toBe(dataSource);
        const own = database({ dataSource, coordinationPool: {} });
        await own.sql.nowMillis();
        expect(own.sql.dataSource === dataSource).toBe(!server());
        expect(CoordinationPool.of(own.sql.dataSource) !== undefined).toBe(server());
      } finally {
        await dataSource.destroy();
      }
    });

    it("closes with the application's DataSource at the latest (a startup that failed runs no shutdown hook)", async () => {
      const dataSource = await createTestDataSource(ctx.db);
      const module = database({ dataSource });
      await module.sql.nowMillis();
      const lane = module.sql.dataSource;
      await dataSource.destroy();
      expect(lane.isInitialized).toBe(false);
    });

    it('closes at application shutdown', async () => {
      const module = database();
      await module.sql.nowMillis();
      const lane = module.sql.dataSource;
      await module.onApplicationShutdown();
      expect(lane.isInitialized).toBe(!server());
    });
  },
  { overrides: { poolSize: 2 } },
);
