import type { INestApplicationContext } from '@nestjs/common';
import {
  ContendServiceStatus,
  MutexContendServiceFactory,
  MutexServiceStatusError,
  type MutexContendService,
} from '../src';
import {
  createSimbaApp,
  describeEachSimbaTable,
  freshMutex,
  RecordingContender,
  sleepMs,
  waitUntil,
} from './simba-test.support';
import { statement } from '@holdfast/core/kit';

describeEachSimbaTable('MutexContendService contract', (ctx) => {
  let app: INestApplicationContext;
  let factory: MutexContendServiceFactory;
  const services: MutexContendService[] = [];
  const create = (contender: RecordingContender) => {
    const service = factory.createMutexContendService(contender);
    services.push(service);
    return service;
  };

  beforeAll(async () => {
    app = await createSimbaApp(ctx, { ttl: '2s', transition: '2s', standbyPoll: '200ms' });
    factory = app.get(MutexContendServiceFactory);
  });
  afterEach(async () => {
    await Promise.all(
      services.splice(0).map((s) => (s.status === ContendServiceStatus.RUNNING ? s.stop() : undefined)),
    );
  });
  afterAll(async () => {
    await app?.close();
  });

  it('start acquires, stop releases, and a restart acquires again with a higher fencing token', async () => {
    const contender = new RecordingContender(freshMutex('restart'));
    const service = create(contender);
    expect(service.status).toBe(ContendServiceStatus.INITIAL);
    service.start();
    expect(service.status).toBe(ContendServiceStatus.RUNNING);
    await waitUntil(() => service.isOwner, 5_000, 'first acquisition');
    await waitUntil(() => contender.count('acquired') === 1, 2_000, 'onAcquired');
    const first = contender.events[0].state;
    expect(first.isAcquired(contender.contenderId)).toBe(true);
    expect(first.after.ownerId).toBe(contender.contenderId);
    expect(service.isInTtl).toBe(true);

    await service.stop();
    expect(service.status).toBe(ContendServiceStatus.INITIAL);
    expect(service.isOwner).toBe(false);
    expect(contender.events.map((e) => e.kind)).toEqual(['acquired', 'released']);
    expect(contender.events[1].state.isReleased(contender.contenderId)).toBe(true);
    const [row] = await ctx.sql.query<{ owner_id: string }>(
      statement(
        `SELECT owner_id AS owner_id FROM ${ctx.prefix}simba_mutex WHERE mutex = ${ctx.sql.dialect.placeholder(1)}`,
        [contender.mutex],
      ),
    );
    expect((row.owner_id ?? '').trimEnd()).toBe(''); // CHAR(32) pads on PostgreSQL

    service.start();
    await waitUntil(() => contender.count('acquired') === 2, 5_000, 'second acquisition');
    const [t1, t2] = contender.tokens();
    expect(t2).toBeGreaterThan(t1);
  });

  it('refuses a timing override whose statement timeout is not shorter than the transition', () => {
    expect(() =>
      factory.createMutexContendService(new RecordingContender(freshMutex('timing')), {
        transition: 100,
        statementTimeout: 100,
      }),
    ).toThrow(/statementTimeout < transition/);
  });

  it('refuses wrong status transitions with a clear error', async () => {
    const service = create(new RecordingContender(freshMutex('status')));
    await expect(service.stop()).rejects.toThrow(MutexServiceStatusError);
    service.start();
    expect(() => service.start()).toThrow(/Cannot start\(\) .* while it is RUNNING/);
    const stopping = service.stop();
    expect(service.status).toBe(ContendServiceStatus.STOPPING);
    expect(() => service.start()).toThrow(MutexServiceStatusError);
    await expect(service.stop()).rejects.toThrow(/while it is STOPPING/);
    await stopping;
    expect(service.status).toBe(ContendServiceStatus.INITIAL);
  });

  it('guard: the owner still owns after 3 s with a 2 s ttl (renewed, never released)', async () => {
    const contender = new RecordingContender(freshMutex('guard'));
    const rival = new RecordingContender(contender.mutex);
    const service = create(contender);
    service.start();
    await waitUntil(() => service.isOwner, 5_000, 'acquisition');
    const rivalService = create(rival);
    rivalService.start();
    const token = service.fencingToken!;
    await sleepMs(3_000);
    expect(service.isOwner).toBe(true);
    expect(service.fencingToken!).toBeGreaterThan(token); // renewed at ttl_at
    expect(contender.count('released')).toBe(0);
    expect(rival.count('acquired')).toBe(0);
    expect(rivalService.isOwner).toBe(false);
    expect(rivalService.afterOwner.ownerId).toBe(contender.contenderId);
  });

  it('a callback that throws is logged and does not break the loop', async () => {
    const contender = new RecordingContender(freshMutex('throws'));
    const acquired = contender.onAcquired.bind(contender);
    contender.onAcquired = (state) => {
      acquired(state);
      throw new Error('handler failure (expected in this test)');
    };
    const service = create(contender);
    service.start();
    await waitUntil(() => contender.count('acquired') === 1, 5_000, 'acquisition');
    await sleepMs(2_500);
    expect(service.isOwner).toBe(true);
    await service.stop();
    expect(contender.count('released')).toBe(1);
  });

  it('drops a stale result from before a stop/restart', async () => {
    const contender = new RecordingContender(freshMutex('stale'));
    const service = create(contender);
    service.start();
    await service.stop(); // the first attempt may be in flight: it is awaited and dropped
    await sleepMs(300);
    expect(contender.count('acquired')).toBe(0);
    expect(service.isOwner).toBe(false);
    service.start();
    await waitUntil(() => contender.count('acquired') === 1, 5_000, 'acquisition after restart');
    await sleepMs(300);
    expect(contender.count('acquired')).toBe(1);
  });

  it('stop() hands the mutex to a standby at once (woken, not after the ttl)', async () => {
    const a = new RecordingContender(freshMutex('handover'));
    const b = new RecordingContender(a.mutex);
    const sa = create(a);
    const sb = create(b);
    sa.start();
    await waitUntil(() => sa.isOwner, 5_000, 'a acquires');
    sb.start();
    await sleepMs(300);
    expect(sb.isOwner).toBe(false);
    const t0 = performance.now();
    await sa.stop();
    await waitUntil(() => sb.isOwner, 1_500, 'b takes over well before ttl + transition (4 s)');
    expect(performance.now() - t0).toBeLessThan(1_500);
    expect(b.events[0].state.fencingToken).toBeGreaterThan(a.events[0].state.fencingToken);
  });
});
