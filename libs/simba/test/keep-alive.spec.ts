import { describeEachDatabase } from '@holdfast/testing';
import { processKeptAliveBy } from '@holdfast/core/kit';
import { MutexContendServiceFactory } from '../src';
import { createSimbaApp, freshMutex, RecordingContender, waitUntil } from './simba-test.support';

const holdsOf = (mutex: string) => processKeptAliveBy().filter((w) => w === `simba contender (${mutex})`);

describeEachDatabase('a started contender keeps the process alive', (ctx) => {
  it('from start() to stop()', async () => {
    const app = await createSimbaApp(ctx, { ttl: '2s', transition: '1s' });
    try {
      const mutex = freshMutex('keep');
      const service = app
        .get(MutexContendServiceFactory)
        .createMutexContendService(new RecordingContender(mutex));
      expect(holdsOf(mutex)).toHaveLength(0);
      service.start();
      expect(holdsOf(mutex)).toHaveLength(1);
      await waitUntil(() => service.isOwner, 10_000, 'an owner');
      await service.stop();
      expect(holdsOf(mutex)).toHaveLength(0);
    } finally {
      await app.close();
    }
  });

  it('lets the process go at app.close() when its owner never stopped it', async () => {
    const app = await createSimbaApp(ctx, { ttl: '2s', transition: '1s' });
    const mutex = freshMutex('left');
    const service = app
      .get(MutexContendServiceFactory)
      .createMutexContendService(new RecordingContender(mutex));
    service.start();
    await waitUntil(() => service.isOwner, 10_000, 'an owner');
    await app.close();
    expect(holdsOf(mutex)).toHaveLength(0);
  });
});
