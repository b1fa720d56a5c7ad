import type { INestApplicationContext } from '@nestjs/common';
import { createTestDataSource, testDatabases, uniqueTablePrefix, type TestDatabase } from '@holdfast/testing';
import type { DataSource } from 'typeorm';
import { MutexContendServiceFactory, type MutexContendService, type MutexState } from '../src';
import { createSimbaApp, freshMutex, sleepMs, waitUntil } from './simba-test.support';

/** Seconds each database is contended for; the databases run at the same time. */
const SECONDS = Number(process.env.SIMBA_CONTEND_SECONDS ?? 30);

interface Outcome {
  db: TestDatabase;
  maxCounter: number;
  minCounter: number;
  acquisitions: number;
  owners: Set<string>;
  stops: number;
}

async function contend(db: TestDatabase): Promise<Outcome> {
  const dataSource: DataSource = await createTestDataSource(db);
  const prefix = uniqueTablePrefix(`mc_${db}`);
  let app: INestApplicationContext | undefined;
  const outcome: Outcome = { db, maxCounter: 0, minCounter: 0, acquisitions: 0, owners: new Set(), stops: 0 };
  try {
    app = await createSimbaApp(
      { db, dataSource, prefix, sql: undefined as never },
      { ttl: '1s', transition: '1s', standbyPoll: '200ms' },
    );
    const factory = app.get(MutexContendServiceFactory);
    const mutex = freshMutex('multi');
    let counter = 0;
    const services: MutexContendService[] = Array.from({ length: 10 }, (_, i) =>
      factory.createMutexContendService({
        mutex,
        contenderId: `${db}-contender-${i}`,
        onAcquired: (state: MutexState) => {
          counter++;
          outcome.acquisitions++;
          outcome.owners.add(state.after.ownerId);
          outcome.maxCounter = Math.max(outcome.maxCounter, counter);
        },
        onReleased: () => {
          counter--;
          outcome.minCounter = Math.min(outcome.minCounter, counter);
        },
      }),
    );
    services.forEach((s) => s.start());
    const end = performance.now() + SECONDS * 1_000;
    while (performance.now() < end) {
      await waitUntil(() => services.some((s) => s.isOwner), 5_000, `${db}: an owner`);
      await sleepMs(500 + Math.random() * 1_000);
      const owner = services.find((s) => s.isOwner);
      if (owner) {
        await owner.stop();
        outcome.stops++;
        setTimeout(() => owner.start(), 300);
      }
    }
    await sleepMs(400);
    await Promise.all(services.map((s) => s.stop()));
    outcome.minCounter = Math.min(outcome.minCounter, counter);
    return outcome;
  } finally {
    await app?.close();
    await dataSource.query(`DROP TABLE IF EXISTS ${prefix}simba_mutex`).catch(() => undefined);
    await dataSource.destroy();
  }
}

describe('multi-contend (10 contenders per database, databases concurrently)', () => {
  it(
    `keeps the acquire/release counter at 0 or 1 for ${SECONDS} s and changes owner when owners stop`,
    async () => {
      const outcomes = await Promise.all(testDatabases().map(contend));
      for (const o of outcomes) {
        expect({ db: o.db, max: o.maxCounter, min: o.minCounter }).toEqual({ db: o.db, max: 1, min: 0 });
        expect(o.stops).toBeGreaterThan(3);
        expect(o.acquisitions).toBeGreaterThanOrEqual(o.stops);
        expect(o.owners.size).toBeGreaterThan(1);
      }
    },
    (SECONDS + 60) * 1_000,
  );
});
