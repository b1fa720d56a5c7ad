import { Injectable, type INestApplication } from '@nestjs/common';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { DIALECTS, sqlDialect, toNumber, statement } from '@holdfast/core/kit';
import { countPlaceholders, describeEachDatabase, type TestDatabaseContext } from '@holdfast/testing';
import {
  Failover,
  FailoverCleanupService,
  FailoverMetrics,
  FailoverStoreQueryResolver,
  getFailoverStoreToken,
  type FailoverStore,
} from '@holdfast/failover';
import { failoverKey } from '@holdfast/failover/internal';
import { startFailoverApp } from './support/failover-app';

@Injectable()
class Quotes {
  @Failover({ name: 'quote', expiry: '1h' })
  async quote(key: string) {
    return { key };
  }
}

describe('cleanup statements', () => {
  const resolver = new FailoverStoreQueryResolver();
  it.each(DIALECTS)('%s: a batch deletes at most N rows and binds only the cutoff', (dialect) => {
    const { sql, params } = resolver.cleanBatch({ table: 'T', dialect: sqlDialect(dialect) }, 'cutoff', 5000);
    expect(sql).toContain('5000');
    expect(sql).toMatch(/EXPIRE_ON </);
    expect(countPlaceholders(dialect, sql)).toBe(1);
    expect(params).toEqual(['cutoff']);
    const lease = { name: 'n', key: 'k', asOf: 1, expireOn: 2, payload: '{}', now: 1 };
    expect(
      countPlaceholders(
        dialect,
        resolver.claimLease({ table: 'T', dialect: sqlDialect(dialect) }, lease).sql,
      ),
    ).toBe(6);
  });
});

describeEachDatabase(
  'failover cleanup',
  (ctx: TestDatabaseContext) => {
    const table = () => `${ctx.prefix}FAILOVER_STORE`;
    const count = async (where = '1 = 1') => {
      const [row] = await ctx.sql.query<{ n: unknown }>(
        statement(`SELECT COUNT(*) AS n FROM ${table()} WHERE ${where}`),
      );
      return toNumber(row.n);
    };
    /** `n` expired rows of failover `name`, keyed as its calls with `${prefix}${i}` would be. */
    const expired = async (app: INestApplication, name: string, n: number, prefix = 'k-') => {
      const store = app.get<FailoverStore>(getFailoverStoreToken());
      const base = Date.now() - 3_600_000;
      const items = Array.from({ length: n }, (_, i) => ({
        entry: {
          name,
          key: failoverKey(name, `${prefix}${i}`),
          asOf: new Date(base + i),
          expireOn: new Date(base + 60_000 + i), // later keys expire later
          payload: { key: `${prefix}${i}` },
        },
      }));
      // 100 rows a statement: each write is bound by the store's 500 ms timeout, and on a busy
      // machine a 500-row upsert on PostgreSQL once passed it (a run beside three browser tests).
      for (let i = 0; i < items.length; i += 100) await store.storeMany!(items.slice(i, i + 100));
    };
    const spyBatches = (app: INestApplication, onBatch: (rows: number, index: number) => void = () => {}) => {
      const metrics = app.get(FailoverMetrics);
      const original = metrics.cleanupBatch.bind(metrics);
      const rows: number[] = [];
      jest.spyOn(metrics, 'cleanupBatch').mockImplementation((n: number) => {
        rows.push(n);
        original(n);
        onBatch(n, rows.length);
      });
      return rows;
    };

    afterEach(async () => {
      jest.restoreAllMocks();
      await ctx.sql.execute(statement(`DELETE FROM ${table()}`)).catch(() => undefined);
    });

    it('deletes in statements of at most batchSize rows until none is left, and counts them', async () => {
      const app = await startFailoverApp(
        ctx,
        { async: false, cleanup: { enabled: false, batchSize: 100 } },
        { providers: [Quotes] },
      );
      try {
        await expired(app, 'old', 1_203);
        await app.get(Quotes).quote('live');
        const batches = spyBatches(app);
        expect(await app.get(FailoverCleanupService).cleanup()).toBe(1_203);
        expect(batches).toEqual([...Array(12).fill(100), 3, 0]);
        const metrics = app.get(FailoverMetrics);
        expect(metrics.cleanupRows).toBe(1_203);
        expect(metrics.cleanupBatches).toBe(14);
        expect(await count()).toBe(1);
      } finally {
        await app.close();
      }
    });

    it("without batchSize, deletes the database's default per statement (1,000 on MariaDB, 5,000 elsewhere)", async () => {
      const app = await startFailoverApp(
        ctx,
        { async: false, cleanup: { enabled: false } },
        { providers: [Quotes] },
      );
      try {
        await expired(app, 'old', 2_500);
        const batches = spyBatches(app);
        expect(await app.get(FailoverCleanupService).cleanup()).toBe(2_500);
        expect(batches).toEqual(ctx.db === 'mariadb' ? [1_000, 1_000, 500, 0] : [2_500, 0]);
      } finally {
        await app.close();
      }
    });

    it('a call re-storing an expired key during a large cleanup is done while batches remain, and its row survives', async () => {
      const app = await startFailoverApp(
        ctx,
        { async: false, cleanup: { enabled: false, batchSize: 100 } },
        { providers: [Quotes] },
      );
      try {
        await expired(app, 'quote', 2_000);
        let call: Promise<unknown> | undefined;
        let batchesWhenDone: number | undefined;
        const batches = spyBatches(app, (_rows, index) => {
          if (index !== 1) return;
          // The last key to expire: the cleanup reaches its row last.
          call = app
            .get(Quotes)
            .quote('k-1999')
            .then(() => (batchesWhenDone = batches.length));
        });
        const removed = await app.get(FailoverCleanupService).cleanup();
        await call;
        expect(batches.every((n) => n <= 100)).toBe(true);
        expect(batches.length).toBeGreaterThanOrEqual(20);
        // The caller did not wait for the whole cleanup: batches were still to come when it returned.
        expect(batchesWhenDone).toBeLessThan(batches.length);
        expect(removed).toBeGreaterThanOrEqual(1_999);
        expect(await count(`FAILOVER_KEY = '${failoverKey('quote', 'k-1999')}'`)).toBe(1);
        expect(await count()).toBe(1);
      } finally {
        await app.close();
      }
    });

    it('one instance per tick: the lease goes to one of two instances, the other skips', async () => {
      const options = {
        async: false as const,
        cleanup: { enabled: true, cron: '0 0 * * * *', batchSize: 50 },
      };
      const first = await startFailoverApp(ctx, options, { providers: [Quotes] });
      const second = await startFailoverApp(ctx, options, { providers: [Quotes] });
      try {
        await expired(first, 'old', 120);
        const [a, b] = await Promise.all([
          first.get(FailoverCleanupService).tick(),
          second.get(FailoverCleanupService).tick(),
        ]);
        expect([a, b].sort((x, y) => x - y)).toEqual([0, 120]);
        const skips = first.get(FailoverMetrics).cleanupSkips + second.get(FailoverMetrics).cleanupSkips;
        expect(skips).toBe(1);
        // Within the lease (half the cron period), the next tick is skipped everywhere.
        await expired(first, 'old', 10);
        expect(await first.get(FailoverCleanupService).tick()).toBe(0);
        expect(await second.get(FailoverCleanupService).tick()).toBe(0);
        expect(await count(`FAILOVER_NAME = 'old'`)).toBe(10);
      } finally {
        await first.close();
        await second.close();
      }
    });

    /** Expired rows are removed by the scheduled tick alone (a cron of every second). */
    const cleansOnSchedule = async (app: INestApplication) => {
      await expired(app, 'old', 3);
      const deadline = Date.now() + 20_000;
      while ((await count(`FAILOVER_NAME = 'old'`)) > 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 200));
      expect(await count(`FAILOVER_NAME = 'old'`)).toBe(0);
    };

    it('runs without ScheduleModule: its own timer, like every Holdfast cleanup', async () => {
      const app = await startFailoverApp(
        ctx,
        { async: false, cleanup: { enabled: true, cron: '* * * * * *' } },
        { providers: [Quotes] },
      );
      try {
        await cleansOnSchedule(app);
      } finally {
        await app.close();
      }
    });

    it('with ScheduleModule, its timer is in the SchedulerRegistry as holdfast:failover:cleanup, and gone after close', async () => {
      const app = await startFailoverApp(
        ctx,
        { async: false, cleanup: { enabled: true, cron: '0 0 * * * *' } },
        { imports: [ScheduleModule.forRoot()], providers: [Quotes] },
      );
      const registry = app.get(SchedulerRegistry);
      try {
        expect(registry.getTimeouts()).toContain('holdfast:failover:cleanup');
        expect(registry.getCronJobs().size).toBe(0);
      } finally {
        await app.close();
      }
      expect(registry.getTimeouts()).not.toContain('holdfast:failover:cleanup');
    });

    it('with ScheduleModule, it cleans on its schedule', async () => {
      const app = await startFailoverApp(
        ctx,
        { async: false, cleanup: { enabled: true, cron: '* * * * * *' } },
        { imports: [ScheduleModule.forRoot()], providers: [Quotes] },
      );
      try {
        await cleansOnSchedule(app);
      } finally {
        await app.close();
      }
    });
  },
  { tables: ['FAILOVER_STORE'], tag: 'cleanup' },
);
