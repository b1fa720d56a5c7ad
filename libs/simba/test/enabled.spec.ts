/**
 * `enabled: false` (Simba's `simba.enabled`): the module starts nothing (no table check, no
 * contending, no DataSource lookup) while its providers still inject and answer with a typed error.
 */
import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describeEachDatabase } from '@holdfast/testing';
import {
  AbstractMutexContender,
  LeaderOnly,
  MutexContendRegistry,
  MutexContendServiceFactory,
  MutexContenderProvider,
  OnMutexAcquired,
  SimbaDisabledError,
  SimbaHealthIndicator,
  SimbaLocker,
  SimbaModule,
  type SimbaModuleOptions,
} from '../src';
import { MutexOwnerRepository } from '../src/internal';
import { freshMutex, RecordingContender, sleepMs } from './simba-test.support';

jest.setTimeout(60_000);

describeEachDatabase('SimbaModule enabled: false', (ctx) => {
  const opened: INestApplicationContext[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((a) => a.close()));
  });

  it('starts nothing, checks no table, and every call that needs the database throws SimbaDisabledError', async () => {
    const mutex = freshMutex('disabled');
    const calls: string[] = [];

    @Injectable()
    class Jobs {
      @OnMutexAcquired(mutex) led(): void {
        calls.push('acquired');
      }
      @LeaderOnly(mutex) nightly(): string {
        calls.push('nightly');
        return 'ran';
      }
    }

    @MutexContenderProvider()
    @Injectable()
    class Contender extends AbstractMutexContender {
      constructor() {
        super(mutex);
      }
      override onAcquired(): void {
        calls.push('provider acquired');
      }
    }

    const options: SimbaModuleOptions = {
      enabled: false,
      dataSource: ctx.dataSource,
      // No such table, and 'check': an enabled module would stop startup with SchemaMissingError.
      tablePrefix: `${ctx.prefix}absent_`,
      schema: 'check',
      standbyPoll: 50,
    };
    const app = await Test.createTestingModule({
      imports: [SimbaModule.forRoot(options)],
      providers: [Jobs, Contender],
    }).compile();
    opened.push(app);
    await app.init();

    // Long enough for an enabled module to have acquired a free mutex many times over.
    await sleepMs(500);
    expect(calls).toEqual([]);
    expect(app.get(MutexContendRegistry).all()).toEqual([]);
    expect(app.get(MutexContendRegistry).isOwner(mutex)).toBe(false);
    // @LeaderOnly: nobody leads while Simba is off, so the job runs nowhere.
    expect(app.get(Jobs).nightly()).toBeUndefined();

    const factory = app.get(MutexContendServiceFactory);
    expect(() => factory.createMutexContendService(new RecordingContender(mutex))).toThrow(
      SimbaDisabledError,
    );
    const simba = app.get(SimbaLocker);
    await expect(simba.withLock(mutex, async () => 'never')).rejects.toThrow(SimbaDisabledError);
    expect(() => simba.locker(mutex)).toThrow(SimbaDisabledError);
    await expect(app.get(MutexOwnerRepository).getOwners()).rejects.toThrow(SimbaDisabledError);
    await expect(app.get(MutexOwnerRepository).getOwner(mutex)).rejects.toMatchObject({
      code: 'HOLDFAST_SIMBA_DISABLED',
    });

    // Switched off on purpose is not a failure: the health check is up and says so.
    const health = await app.get(SimbaHealthIndicator).isHealthy();
    expect(health.simba).toMatchObject({ status: 'up', enabled: false });
    expect(calls).toEqual([]);
  });
});
