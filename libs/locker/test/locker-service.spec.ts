import { Injectable } from '@nestjs/common';
import { HoldfastTimers, monotonicMillis } from '@holdfast/core/kit';
import { AbstractLocker, InvalidLockerError, LockerService, type LockerContext } from '@holdfast/locker';
import { Test } from '@nestjs/testing';
import { SchedulerRegistry, ScheduleModule } from '@nestjs/schedule';
import { LockerModule } from '@holdfast/locker';
import { lockerInstance, sleep, waitUntil } from './locker-test-kit';

/** Shared state the test drives; injected into the custom locker to prove DI works. */
@Injectable()
class FakeStore {
  free = true;
  keepAliveThrows = false;
  keepAliveResult = true;
  keepAliveCalls = 0;
  keepAliveErrors = 0;
  released = 0;
  /** How long a lock stays certainly valid after acquire / keep-alive; undefined: no validUntil. */
  validityMs?: number = 1_500;
}

@Injectable()
class FakeLocker extends AbstractLocker {
  private until = 0;
  constructor(private readonly store: FakeStore) {
    super();
  }
  override configure(context: LockerContext): void {
    super.configure(context);
    if (this.store.validityMs === undefined) (this as { validUntil?: unknown }).validUntil = undefined;
  }
  protected async tryAcquire(): Promise<boolean> {
    if (this.store.keepAliveThrows) throw new Error('store unreachable');
    if (!this.store.free) return false;
    this.store.free = false;
    this.until = monotonicMillis() + (this.store.validityMs ?? 0);
    return true;
  }
  async keepAlive(): Promise<boolean> {
    this.store.keepAliveCalls++;
    if (this.store.keepAliveThrows) {
      this.store.keepAliveErrors++;
      throw new Error('store unreachable');
    }
    this.until = monotonicMillis() + (this.store.validityMs ?? 0);
    return this.store.keepAliveResult;
  }
  validUntil(): number {
    return this.until;
  }
  async stop(): Promise<void> {
    this.store.released++;
    this.store.free = true;
  }
}

describe('LockerService with a custom locker', () => {
  const make = async (store: FakeStore, startup: 'block' | 'background' = 'block', withSchedule = false) =>
    lockerInstance(
      {
        locker: { type: 'custom', useClass: FakeLocker },
        lockAcquireSleepInterval: 300,
        lockKeepAlivePeriod: 100,
        startup,
      },
      [],
      // A custom locker is created in LockerModule's scope: its dependencies come from global
      // modules (forRoot) or from the `imports` of forRootAsync.
      [
        {
          module: class FakeStoreModule {},
          global: true,
          providers: [{ provide: FakeStore, useValue: store }],
          exports: [FakeStore],
        },
        ...(withSchedule ? [ScheduleModule.forRoot()] : []),
      ],
    );

  it("keeps its keep-alive timer in the app's SchedulerRegistry, found as Simba finds it", async () => {
    const store = new FakeStore();
    const instance = await make(store, 'block', true);
    try {
      await instance.init();
      expect(instance.locker.isMaster).toBe(true);
      const registry = instance.moduleRef.get(SchedulerRegistry);
      const name = `holdfast:locker:keep-alive:${instance.locker.lockName}`;
      await waitUntil(
        () => registry.getTimeouts().includes(name),
        5_000,
        'the keep-alive timer in the registry',
      );
    } finally {
      await instance.close();
    }
  });

  it('plugs in through { type: custom, useClass } with dependency injection, and releases on close', async () => {
    const store = new FakeStore();
    const instance = await make(store);
    await instance.init();
    expect(instance.moduleRef.get(LockerService).isMaster).toBe(true);
    await waitUntil(() => store.keepAliveCalls >= 2, 5_000, 'keep-alives');
    await instance.close();
    expect(store.released).toBe(1);
    expect(instance.events.map((e) => e.type)).toEqual(['acquired', 'lost']);
    expect(instance.events[1]).toMatchObject({ reason: 'stopped' });
  });

  it('a throwing keep-alive keeps the master role while the lock is certainly valid, then demotes', async () => {
    const store = new FakeStore();
    store.validityMs = 2_000;
    const instance = await make(store);
    await instance.init();
    store.keepAliveThrows = true;
    await waitUntil(() => store.keepAliveErrors >= 2, 5_000, 'failing keep-alives');
    // Two keep-alives failed, but the validity (2 s from the last good one) has not run out.
    expect(instance.locker.isMaster).toBe(true);
    expect(instance.events.map((e) => e.type)).toEqual(['acquired']);
    await waitUntil(() => instance.events.some((e) => e.type === 'lost'), 10_000, 'demotion');
    expect(instance.events[1]).toMatchObject({ type: 'lost', reason: 'keep-alive-failed' });
    expect(instance.locker.role).toBe('standby');
    // Back as standby in-process: once the store works again it is master again.
    store.keepAliveThrows = false;
    await waitUntil(() => instance.locker.isMaster, 10_000, 're-acquire');
    await instance.close();
  });

  it('a throwing keep-alive demotes at once when the locker cannot say how long the lock is valid', async () => {
    const store = new FakeStore();
    store.validityMs = undefined;
    const instance = await make(store);
    await instance.init();
    store.keepAliveThrows = true;
    await waitUntil(() => instance.events.some((e) => e.type === 'lost'), 5_000, 'demotion');
    expect(store.keepAliveErrors).toBe(1);
    await instance.close();
  });

  it('keepAlive false demotes in-process, runs @OnLockLost, and returns to acquiring', async () => {
    const store = new FakeStore();
    const instance = await make(store);
    await instance.init();
    store.keepAliveResult = false;
    await waitUntil(() => instance.events.some((e) => e.type === 'lost'), 5_000, 'demotion');
    expect(instance.events[1]).toMatchObject({ type: 'lost', reason: 'keep-alive-false' });
    store.keepAliveResult = true;
    await waitUntil(
      () => instance.events.filter((e) => e.type === 'acquired').length === 2,
      5_000,
      're-acquire',
    );
    await instance.close();
  });

  it('a standby retries after a quarter of the interval while the store fails, after the interval while the lock is held', async () => {
    const sleep = jest.spyOn(HoldfastTimers.prototype, 'sleep');
    const waits = () =>
      sleep.mock.calls.filter(([name]) => name.startsWith('holdfast:locker:acquire:')).map(([, ms]) => ms);
    const store = new FakeStore();
    store.free = false;
    store.keepAliveThrows = true; // the store does not answer: every attempt throws
    const instance = await make(store, 'background');
    try {
      await instance.init();
      await waitUntil(() => waits().length >= 3, 5_000, 'failed attempts');
      store.keepAliveThrows = false; // it answers: the lock is held by another instance
      const failed = waits().length;
      await waitUntil(() => waits().length >= failed + 2, 5_000, 'attempts on a held lock');
      expect(waits().slice(0, failed)).toEqual(Array(failed).fill(75));
      // (the attempt in flight when the store came back may have failed still: its wait is skipped)
      expect(waits().slice(failed + 1)).toEqual(Array(waits().length - failed - 1).fill(300));
      store.free = true;
      await waitUntil(() => instance.locker.isMaster, 5_000, 'master');
    } finally {
      sleep.mockRestore();
      await instance.close();
    }
  });

  it('refuses a custom class that is not a Locker', async () => {
    class NotALocker {}
    const moduleRef = await Test.createTestingModule({
      imports: [LockerModule.forRoot({ locker: { type: 'custom', useClass: NotALocker as never } })],
    }).compile();
    await expect(moduleRef.init()).rejects.toThrow(InvalidLockerError);
    await sleep(0);
  });
});
