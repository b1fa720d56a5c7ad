import { Logger, type INestApplicationContext } from '@nestjs/common';
import { configureCoordinationPool } from '@holdfast/core';
import {
  createTestDataSource,
  describeEachDatabase,
  testDatabases,
  uniqueTablePrefix,
} from '@holdfast/testing';
import { MutexContendServiceFactory, type MutexContendService, simbaTable } from '../src';
import { createSimbaApp, freshMutex, RecordingContender, sleepMs, waitUntil } from './simba-test.support';

const OPTIONS = { ttl: '1s', transition: '1s', standbyPoll: '100ms' };

/** Warnings logged through Nest's Logger while `work` runs. */
async function warningsDuring(work: () => Promise<void>): Promise<string[]> {
  const spy = jest.spyOn(Logger.prototype, 'warn');
  try {
    await work();
    return spy.mock.calls.map((c) => String(c[0]));
  } finally {
    spy.mockRestore();
  }
}

function blockEventLoop(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy: nothing else in this process runs meanwhile
  }
}

describeEachDatabase(
  'simba says once when it cannot keep its leases',
  (ctx) => {
    let app: INestApplicationContext;
    const services: MutexContendService[] = [];

    beforeAll(async () => {
      app = await createSimbaApp(ctx, OPTIONS);
    });
    afterAll(async () => {
      await Promise.all(services.map((s) => (s.status === 'RUNNING' ? s.stop() : undefined)));
      await app?.close();
    });

    it('an event loop blocked again and again: one warning with the reason', async () => {
      const factory = app.get(MutexContendServiceFactory);
      const mutex = freshMutex('blocked');
      const owner = factory.createMutexContendService(new RecordingContender(mutex));
      const standby = factory.createMutexContendService(new RecordingContender(mutex));
      services.push(owner, standby);
      // Watched from the start: on a busy machine a late timer before the blocks below opens the
      // episode itself, and its one warning is the one this test expects.
      const warnings = await warningsDuring(async () => {
        owner.start();
        await waitUntil(() => owner.isOwner, 5_000, 'an owner');
        standby.start(); // polls every 100 ms: the loop has a tick due all the time
        await sleepMs(300);
        for (let i = 0; i < 3; i++) {
          blockEventLoop(600);
          await sleepMs(300);
        }
      });
      const blocked = warnings.filter((w) => w.includes('the event loop was blocked for'));
      expect(blocked).toHaveLength(1);
      expect(blocked[0]).toMatch(
        /^Simba may not keep its leases on .*simba_mutex: the event loop was blocked for \d+ ms/,
      );
    });
  },
  { tables: [simbaTable()] },
);

const servers = testDatabases().filter((db) => db !== 'sqlite');

for (const db of servers) {
  describe(`simba and an exhausted connection pool [${db}]`, () => {
    it('one warning naming the pool while the only connection is taken, again and again, and one for another cause meanwhile', async () => {
      const dataSource = await createTestDataSource(db, { poolSize: 1 });
      // Simba shares the application's pool here (by default it has one of its own, #31), so
      // that the application can take the only connection from under it.
      configureCoordinationPool(dataSource, false);
      const prefix = uniqueTablePrefix(`pool_${db}`);
      const app = await createSimbaApp({ db, dataSource, prefix, sql: undefined as never }, OPTIONS);
      const mutex = freshMutex('pool');
      const factory = app.get(MutexContendServiceFactory);
      const owner = factory.createMutexContendService(new RecordingContender(mutex));
      const standby = factory.createMutexContendService(new RecordingContender(mutex));
      try {
        owner.start();
        await waitUntil(() => owner.isOwner, 5_000, 'an owner');
        standby.start();
        await sleepMs(300);
        const warnings = await warningsDuring(async () => {
          for (let i = 0; i < 3; i++) {
            const runner = dataSource.createQueryRunner(); // the application holds the only connection
            await runner.connect();
            await sleepMs(700);
            await runner.release();
            await sleepMs(200);
          }
          // Another cause while the pool's episode is still on: said too, once.
          for (let i = 0; i < 2; i++) {
            blockEventLoop(600);
            await sleepMs(300);
          }
        });
        const pool = warnings.filter((w) => /pooled connection/.test(w));
        expect(pool).toHaveLength(1);
        expect(warnings.filter((w) => w.includes('the event loop was blocked for'))).toHaveLength(1);
      } finally {
        await Promise.all([owner, standby].map((s) => (s.status === 'RUNNING' ? s.stop() : undefined)));
        await app.close();
        await dataSource.query(`DROP TABLE IF EXISTS ${prefix}simba_mutex`).catch(() => undefined);
        await dataSource.destroy();
      }
    });
  });
}
