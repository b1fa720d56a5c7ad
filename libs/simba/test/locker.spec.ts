import type { INestApplicationContext } from '@nestjs/common';
import { MutexAcquireTimeoutError, MutexLockerStateError, MutexLostError, SimbaLocker } from '../src';
import { createSimbaApp, describeEachSimbaTable, freshMutex, sleepMs, waitUntil } from './simba-test.support';
import { statement } from '@holdfast/core/kit';

describeEachSimbaTable('SimbaLocker', (ctx) => {
  let app: INestApplicationContext;
  let simba: SimbaLocker;

  beforeAll(async () => {
    app = await createSimbaApp(ctx, { ttl: '1s', transition: '2s', standbyPoll: '100ms' });
    simba = app.get(SimbaLocker);
  });
  afterAll(async () => {
    await app?.close();
  });

  it('acquire() blocks a second locker until release()', async () => {
    const mutex = freshMutex('lock');
    const first = simba.locker(mutex);
    const token = await first.acquire();
    expect(first.isOwner).toBe(true);
    const second = simba.locker(mutex);
    let secondToken: number | undefined;
    const waiting = second.acquire('10s').then((t) => (secondToken = t));
    await sleepMs(1_500); // longer than the ttl: the first locker keeps renewing
    expect(secondToken).toBeUndefined();
    await first.release();
    expect(first.isOwner).toBe(false);
    await waiting;
    expect(secondToken!).toBeGreaterThan(token);
    await expect(second.acquire()).rejects.toThrow(MutexLockerStateError);
    await second.release();
    await expect(second.release()).rejects.toThrow(/release\(\) called while INITIAL/);
  });

  it('a locker still held at application shutdown is released', async () => {
    const own = await createSimbaApp(ctx, { ttl: '1s', transition: '2s' });
    const mutex = freshMutex('shutdown');
    const held = own.get(SimbaLocker).locker(mutex);
    await held.acquire();
    await own.close();
    expect(held.isOwner).toBe(false);
    expect(held.signal.aborted).toBe(true);
    const t0 = performance.now();
    await expect(simba.withLock(mutex, () => 'next', { timeout: '1500ms' })).resolves.toBe('next');
    expect(performance.now() - t0).toBeLessThan(1_500);
  });

  it('a timeout rejects with a typed error naming the mutex and the timeout', async () => {
    const mutex = freshMutex('timeout');
    const holder = simba.locker(mutex);
    await holder.acquire();
    const error = await simba
      .locker(mutex)
      .acquire(300)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MutexAcquireTimeoutError);
    expect((error as Error).message).toContain(`'${mutex}'`);
    expect((error as Error).message).toContain('300 ms');
    const viaWithLock = await simba
      .withLock(mutex, () => 'never', { timeout: '250ms' })
      .catch((e: unknown) => e);
    expect(viaWithLock).toBeInstanceOf(MutexAcquireTimeoutError);
    await holder.release();
    // The timed-out lockers released their rows: the mutex is free at once.
    await expect(simba.withLock(mutex, () => 'ok', { timeout: '2s' })).resolves.toBe('ok');
  });

  it('withLock() runs the function exclusively and releases even when it throws', async () => {
    const mutex = freshMutex('withlock');
    let inside = 0;
    let maxInside = 0;
    const run = (i: number) =>
      simba.withLock(
        mutex,
        async (signal) => {
          inside++;
          maxInside = Math.max(maxInside, inside);
          expect(signal.aborted).toBe(false);
          await sleepMs(50);
          inside--;
          if (i % 2) throw new Error(`job ${i} failed`);
          return i;
        },
        { timeout: '20s' },
      );
    const results = await Promise.allSettled([0, 1, 2, 3].map(run));
    expect(maxInside).toBe(1);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
  });

  it('the signal aborts with MutexLostError when ownership is lost while the function runs', async () => {
    const mutex = freshMutex('lost');
    const d = ctx.sql.dialect;
    const outcome = await simba.withLock(mutex, async (signal) => {
      await ctx.sql.execute(
        statement(
          `UPDATE ${ctx.prefix}simba_mutex SET owner_id = ${d.placeholder(1)}, ttl_at = ${d.nowMillis} + 60000, transition_at = ${d.nowMillis} + 60000 WHERE mutex = ${d.placeholder(2)}`,
          ['intruder', mutex],
        ),
      );
      await waitUntil(() => signal.aborted, 4_000, 'signal aborted');
      return signal.reason;
    });
    expect(outcome).toBeInstanceOf(MutexLostError);
  });
});
