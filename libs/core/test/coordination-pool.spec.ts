/**
 * #31: a module's statements run on a small pool of its own (HoldfastDatabase's coordination
 * pool), opened from the application's DataSource options: they go through while every
 * connection of the application's pool is busy, the pool is sized by what the module declares,
 * `coordinationPool: false` keeps the module on the application's pool, and the pool closes at
 * application shutdown. SQLite has one connection and no pool: the module uses it.
 */
import type { ModuleRef } from '@nestjs/core';
import {
  configureCoordinationPool,
  DatabaseResolver,
  declarePoolNeed,
  HoldfastDatabase,
  InvalidOptionsError,
  type HoldfastDatabaseOptions,
} from '@holdfast/core/kit';
import { createTestDataSource, describeEachDatabase } from '@holdfast/testing';
import { configuredPoolSize } from '../src/database/pool-budget';

class ModuleDatabase extends HoldfastDatabase {
  constructor(options: Partial<HoldfastDatabaseOptions>) {
    super({} as ModuleRef, new DatabaseResolver(), 'TestModule', {
      tablePrefix: '',
      schema: 'check',
      ...options,
    });
  }

  /** The application-pool client (for the inbox's accepts). */
  get application() {
    return this.applicationSql;
  }
}

describeEachDatabase(
  'coordination pool',
  (ctx) => {
    const server = () => ctx.db !== 'sqlite';
    const sleepSql = () => (ctx.db === 'postgres' ? 'SELECT pg_sleep(1.5)' : 'SELECT SLEEP(1.5)');
    const databases: ModuleDatabase[] = [];
    const database = (options: Partial<HoldfastDatabaseOptions> = {}) => {
      const made = new ModuleDatabase({ dataSource: ctx.dataSource, ...options });
      databases.push(made);
      return made;
    };
    afterAll(async () => {
      for (const made of databases) await made.onApplicationShutdown();
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

    it('is sized by the needs the module declares, plus one', async () => {
      const module = database();
      if (!server()) return;
      expect(configuredPoolSize(module.sql.dataSource)).toBe(1);
      declarePoolNeed(module.sql, { component: 'one', connections: 1 });
      declarePoolNeed(module.sql, { component: 'two', connections: 2, reserved: true });
      expect(configuredPoolSize(module.sql.dataSource)).toBe(4);
      // Three sessions held at once on the module's pool, none of them waiting for another.
      let inside = 0;
      let most = 0;
      await Promise.all(
        [0, 1, 2].map(() =>
          module.sql.session(async (s) => {
            most = Math.max(most, ++inside);
            await s.query(ctx.db === 'postgres' ? 'SELECT pg_sleep(0.3)' : 'SELECT SLEEP(0.3)');
            inside--;
          }),
        ),
      );
      expect(most).toBe(3);
      expect(configuredPoolSize(ctx.dataSource)).toBe(2);
    });

    it('takes a configured size, and coordinationPool: false keeps the module on the application pool', async () => {
      const fixed = database({ coordinationPool: { size: 3 } });
      const off = database({ coordinationPool: false });
      await off.sql.nowMillis();
      expect(off.sql.dataSource).toBe(ctx.dataSource);
      if (!server()) return;
      declarePoolNeed(fixed.sql, { component: 'big', connections: 5 });
      expect(configuredPoolSize(fixed.sql.dataSource)).toBe(3);
    });

    it('refuses a size that is not a positive integer, naming the option', () => {
      expect(() => database({ coordinationPool: { size: 0 } }).sql).toThrow(InvalidOptionsError);
      expect(() => database({ coordinationPool: { size: 1.5 } }).sql).toThrow(/coordinationPool.size/);
      expect(() => configureCoordinationPool(ctx.dataSource, { size: -1 })).toThrow(InvalidOptionsError);
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
        await own.onApplicationShutdown();
      } finally {
        await dataSource.destroy();
      }
    });

    it("closes with the application's DataSource at the latest (a startup that failed runs no shutdown hook)", async () => {
      const dataSource = await createTestDataSource(ctx.db);
      const module = database({ dataSource });
      await module.sql.nowMillis();
      await dataSource.destroy();
      expect(module.sql.dataSource.isInitialized).toBe(false);
    });

    it('closes at application shutdown', async () => {
      const module = database();
      await module.sql.nowMillis();
      await module.onApplicationShutdown();
      expect(module.sql.dataSource.isInitialized).toBe(server() ? false : true);
    });
  },
  { overrides: { poolSize: 2 } },
);
