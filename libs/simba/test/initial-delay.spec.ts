/**
 * `initialDelay` (Simba's): a started contender makes no attempt before the delay has passed,
 * also when another contender of the same process releases the mutex meanwhile.
 */
import type { INestApplicationContext } from '@nestjs/common';
import { monotonicMillis } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import { MutexContendServiceFactory, simbaTable } from '../src';
import { createSimbaApp, freshMutex, RecordingContender, sleepMs, waitUntil } from './simba-test.support';

jest.setTimeout(60_000);

const DELAY = 4_000;
/** When the contender is looked at: well inside the delay, well after an attempt without one. */
const LOOK_AFTER = 600;

describeEachDatabase(
  'initialDelay',
  (ctx) => {
    let app: INestApplicationContext;
    beforeAll(async () => {
      app = await createSimbaApp(ctx, { initialDelay: DELAY, ttl: 2_000, transition: 1_000 });
    });
    afterAll(() => app?.close());

    /** Asserts the contender is not owner, at a moment that is still inside its initial delay. */
    const expectWaiting = (contender: RecordingContender, startedAt: number) => {
      const elapsed = monotonicMillis() - startedAt;
      // The look must fall inside the delay to prove anything: fail loudly on a machine too slow for that.
      expect(elapsed).toBeLessThan(DELAY);
      expect(contender.count('acquired')).toBe(0);
    };

    it('a free mutex is not acquired before the initial delay, and is after it', async () => {
      const contender = new RecordingContender(freshMutex('delay'));
      const service = app.get(MutexContendServiceFactory).createMutexContendService(contender);
      const startedAt = monotonicMillis();
      service.start();
      try {
        await sleepMs(LOOK_AFTER);
        expectWaiting(contender, startedAt);
        await waitUntil(() => contender.count('acquired') === 1, 20_000, 'the acquisition after the delay');
        expect(monotonicMillis() - startedAt).toBeGreaterThanOrEqual(DELAY);
      } finally {
        await service.stop();
      }
    });

    it('a release by another contender of the same process does not cut the initial delay short', async () => {
      const mutex = freshMutex('delay-peer');
      const factory = app.get(MutexContendServiceFactory);
      const first = new RecordingContender(mutex);
      const firstService = factory.createMutexContendService(first, { initialDelay: 0 });
      firstService.start();
      await waitUntil(() => firstService.isOwner, 20_000, 'the first contender to acquire');

      const second = new RecordingContender(mutex);
      const secondService = factory.createMutexContendService(second);
      const startedAt = monotonicMillis();
      secondService.start();
      try {
        // The release wakes the standbys of this process at once (no standbyPoll wait).
        await firstService.stop();
        await sleepMs(LOOK_AFTER);
        expectWaiting(second, startedAt);
        await waitUntil(() => second.count('acquired') === 1, 20_000, 'the acquisition after the delay');
        expect(monotonicMillis() - startedAt).toBeGreaterThanOrEqual(DELAY);
      } finally {
        await secondService.stop();
      }
    });
  },
  { tables: [simbaTable()] },
);
