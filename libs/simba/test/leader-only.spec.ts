import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Interval, ScheduleModule } from '@nestjs/schedule';
import { LeaderOnly, MutexContendRegistry, OnMutexAcquired, OnMutexReleased, type MutexState } from '../src';
import { createSimbaApp, describeEachSimbaTable, sleepMs, waitUntil } from './simba-test.support';

const MUTEX = 'schedule-job';
const ticks: { instance: number; at: number }[] = [];
const events: { instance: number; kind: string; token: number }[] = [];
let nextInstance = 0;

@Injectable()
class Job {
  readonly instance = nextInstance++;
  selfCalls = 0;

  @Interval(100)
  @LeaderOnly(MUTEX)
  tick(): void {
    ticks.push({ instance: this.instance, at: performance.now() });
  }

  @LeaderOnly(MUTEX)
  @Interval(150)
  other(): string {
    return 'ran';
  }

  callOther(): string | undefined {
    return this.other();
  }

  @OnMutexAcquired(MUTEX)
  acquired(state: MutexState): void {
    events.push({ instance: this.instance, kind: 'acquired', token: state.fencingToken });
  }

  @OnMutexReleased(MUTEX)
  released(state: MutexState): void {
    events.push({ instance: this.instance, kind: 'released', token: state.fencingToken });
  }
}

describeEachSimbaTable('@LeaderOnly with @nestjs/schedule', (ctx) => {
  const apps: INestApplicationContext[] = [];
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
  });

  it('runs the job on exactly one instance, and on another after the leader shuts down', async () => {
    ticks.length = 0;
    events.length = 0;
    for (let i = 0; i < 3; i++) {
      apps.push(
        await createSimbaApp(
          ctx,
          { ttl: '1s', transition: '2s', standbyPoll: '100ms' },
          [Job],
          [ScheduleModule.forRoot() as never],
        ),
      );
    }
    const jobs = apps.map((a) => a.get(Job));
    const registries = apps.map((a) => a.get(MutexContendRegistry));
    await waitUntil(() => registries.some((r) => r.isOwner(MUTEX)), 5_000, 'a leader');
    await sleepMs(2_500);
    const leader = registries.findIndex((r) => r.isOwner(MUTEX));
    expect(registries.filter((r) => r.isOwner(MUTEX))).toHaveLength(1);
    const tickers = new Set(ticks.map((t) => t.instance));
    expect([...tickers]).toEqual([jobs[leader].instance]);
    expect(ticks.length).toBeGreaterThan(10);
    // Self calls are guarded too; other decorators' metadata survived in both orders.
    expect(jobs[leader].callOther()).toBe('ran');
    expect(jobs.filter((_, i) => i !== leader).map((j) => j.callOther())).toEqual([undefined, undefined]);

    const before = ticks.length;
    const stoppedAt = performance.now();
    await apps[leader].close();
    await waitUntil(() => registries.some((r, i) => i !== leader && r.isOwner(MUTEX)), 3_000, 'a new leader');
    await sleepMs(1_000);
    const after = ticks.slice(before);
    const newLeader = registries.findIndex((r, i) => i !== leader && r.isOwner(MUTEX));
    expect(after.filter((t) => t.at > stoppedAt).every((t) => t.instance === jobs[newLeader].instance)).toBe(
      true,
    );
    expect(after.length).toBeGreaterThan(3);
    const released = events.find((e) => e.kind === 'released' && e.instance === jobs[leader].instance);
    const acquiredByNew = events.find(
      (e) => e.kind === 'acquired' && e.instance === jobs[newLeader].instance,
    );
    expect(events.indexOf(released!)).toBeLessThan(events.indexOf(acquiredByNew!));
    expect(acquiredByNew!.token).toBeGreaterThan(events[0].token);
  });
});
