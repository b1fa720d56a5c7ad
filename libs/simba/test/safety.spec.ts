import type { INestApplicationContext } from '@nestjs/common';
import { ContendServiceStatus, MutexContendServiceFactory, type MutexContendService } from '../src';
import { SimbaConnection } from '../src/mutex/simba-connection';
import {
  createSimbaApp,
  describeEachSimbaTable,
  freshMutex,
  RecordingContender,
  sleepMs,
  waitUntil,
} from './simba-test.support';
import { statement } from '@holdfast/core/kit';

describeEachSimbaTable('simba safety', (ctx) => {
  let app: INestApplicationContext;
  let factory: MutexContendServiceFactory;
  const services: MutexContendService[] = [];
  const create = (contender: RecordingContender) => {
    const service = factory.createMutexContendService(contender);
    services.push(service);
    return service;
  };
  const row = async (mutex: string) => {
    const [r] = await ctx.sql.query<Record<string, unknown>>(
      statement(
        `SELECT owner_id AS owner_id, ttl_at AS ttl_at, transition_at AS transition_at, version AS version, ` +
          `${ctx.sql.dialect.nowMillis} AS now_ms FROM ${ctx.prefix}simba_mutex WHERE mutex = ${ctx.sql.dialect.placeholder(1)}`,
        [mutex],
      ),
    );
    return {
      owner: String(r.owner_id ?? '').trimEnd(), // CHAR(32) pads on PostgreSQL
      ttlAt: Number(r.ttl_at),
      transitionAt: Number(r.transition_at),
      version: Number(r.version),
      now: Number(r.now_ms),
    };
  };

  beforeAll(async () => {
    app = await createSimbaApp(ctx, { ttl: '2s', transition: '2s', standbyPoll: '200ms' });
    factory = app.get(MutexContendServiceFactory);
  });
  afterEach(async () => {
    jest.useRealTimers();
    await Promise.all(
      services.splice(0).map((s) => (s.status === ContendServiceStatus.RUNNING ? s.stop() : undefined)),
    );
  });
  afterAll(async () => {
    await app?.close();
  });

  it('16 concurrent first acquisitions of a fresh mutex have exactly one winner', async () => {
    // A module with a long transition, so its statement bound (a third of it) leaves room for 16
    // transactions queued on one row lock and a pool of 10 on a busy machine (666 ms did not).
    const wide = await createSimbaApp(ctx, { ttl: '10s', transition: '10s', standbyPoll: '200ms' });
    const repository = wide.get(SimbaConnection).repository;
    const mutex = freshMutex('first16');
    const ids = Array.from({ length: 16 }, (_, i) => `contender-${i}`);
    const results = await Promise.all(ids.map((id) => repository.acquire(mutex, id, 2_000, 2_000))).finally(
      () => wide.close(),
    );
    const winners = results.filter((r) => r.acquired);
    expect(winners).toHaveLength(1);
    const winner = winners[0].owner.ownerId;
    expect(results.every((r) => r.owner.ownerId === winner)).toBe(true);
    expect((await row(mutex)).owner).toBe(winner);

    // The same race through 16 contend services started together.
    const racers = Array.from({ length: 16 }, () => new RecordingContender(freshMutex('unused')));
    const m2 = freshMutex('race16');
    const contenders = racers.map((r) => new RecordingContender(m2, r.contenderId));
    const raced = contenders.map((c) => create(c));
    raced.forEach((s) => s.start());
    await waitUntil(() => raced.some((s) => s.isOwner), 5_000, 'a winner');
    await sleepMs(500);
    expect(raced.filter((s) => s.isOwner)).toHaveLength(1);
    expect(contenders.reduce((n, c) => n + c.count('acquired'), 0)).toBe(1);
  });

  it('fencing tokens strictly increase across owners', async () => {
    const mutex = freshMutex('fencing');
    const contenders = Array.from({ length: 4 }, () => new RecordingContender(mutex));
    const svc = contenders.map((c) => create(c));
    svc.forEach((s) => s.start());
    const tokens: number[] = [];
    for (let handover = 0; handover < 6; handover++) {
      await waitUntil(() => svc.some((s) => s.isOwner), 5_000, `owner #${handover}`);
      const owner = svc.find((s) => s.isOwner)!;
      tokens.push(owner.fencingToken!);
      await owner.stop();
      owner.start();
    }
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
    const all = contenders.flatMap((c) =>
      c.events.filter((e) => e.kind === 'acquired').map((e) => e.state.fencingToken),
    );
    expect(new Set(all).size).toBe(all.length);
  });

  it.each([
    ['+1 h', 3_600_000],
    ['-1 h', -3_600_000],
  ])('an app clock skewed by %s changes nothing (times come from the database)', async (_label, skew) => {
    jest.useFakeTimers({
      now: Date.now() + skew,
      doNotFake: [
        'hrtime',
        'nextTick',
        'performance',
        'queueMicrotask',
        'requestAnimationFrame',
        'cancelAnimationFrame',
        'requestIdleCallback',
        'cancelIdleCallback',
        'setImmediate',
        'clearImmediate',
        'setInterval',
        'clearInterval',
        'setTimeout',
        'clearTimeout',
      ],
    });
    expect(Math.abs(Date.now() - (await ctx.sql.nowMillis()) - skew)).toBeLessThan(5_000);
    const a = new RecordingContender(freshMutex('skew'));
    const b = new RecordingContender(a.mutex);
    const sa = create(a);
    const sb = create(b);
    sa.start();
    await waitUntil(() => sa.isOwner, 5_000, 'a acquires');
    sb.start();
    const r = await row(a.mutex);
    expect(r.owner).toBe(a.contenderId);
    expect(r.ttlAt - r.now).toBeGreaterThan(0);
    expect(r.ttlAt - r.now).toBeLessThanOrEqual(2_000);
    expect(r.transitionAt - r.ttlAt).toBe(2_000);
    expect(sa.isInTtl).toBe(true);
    await sleepMs(2_600); // one renewal
    expect(sa.isOwner).toBe(true);
    expect(sb.isOwner).toBe(false);
    await sa.stop();
    await waitUntil(() => sb.isOwner, 2_000, 'b takes over');
    expect(a.count('released')).toBe(1);
  });

  it('an owner whose row is taken over steps down and runs onReleased', async () => {
    const a = new RecordingContender(freshMutex('stolen'));
    const sa = create(a);
    sa.start();
    await waitUntil(() => sa.isOwner, 5_000, 'a acquires');
    const d = ctx.sql.dialect;
    await ctx.sql.execute(
      statement(
        `UPDATE ${ctx.prefix}simba_mutex SET owner_id = ${d.placeholder(1)}, transition_at = ${d.nowMillis} + 60000, ttl_at = ${d.nowMillis} + 60000, version = version + 1 WHERE mutex = ${d.placeholder(2)}`,
        ['intruder', a.mutex],
      ),
    );
    await waitUntil(() => a.count('released') === 1, 4_000, 'a notices at its next renewal');
    expect(sa.isOwner).toBe(false);
    expect(a.events[1].state.after.ownerId).toBe('intruder');
    expect(a.events[1].state.isReleased(a.contenderId)).toBe(true);
  });
});
