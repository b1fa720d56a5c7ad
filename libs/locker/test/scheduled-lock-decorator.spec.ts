import { Injectable } from '@nestjs/common';
import { Cron, SchedulerRegistry, ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { createTestDataSource, uniqueTablePrefix } from '@holdfast/testing';
import { ScheduledLock, ScheduledLockConfigurationError, ScheduledLockModule } from '@holdfast/locker';

describe('@ScheduledLock()', () => {
  const bad: [string, Parameters<typeof ScheduledLock>[0], RegExp][] = [
    ['an empty name', { name: '', lockAtMostFor: '1s' }, /name "" must be a non-empty string/],
    ['a long name', { name: 'x'.repeat(65), lockAtMostFor: '1s' }, /at most 64 characters/],
    ['no lockAtMostFor', { name: 'j', lockAtMostFor: 0 }, /lockAtMostFor 0 must be above 0/],
    ['a bad duration', { name: 'j', lockAtMostFor: 'soon' }, /lockAtMostFor/],
    [
      'lockAtLeastFor above lockAtMostFor',
      { name: 'j', lockAtMostFor: '1s', lockAtLeastFor: '2s' },
      /lockAtLeastFor \(2000 ms\) must not exceed lockAtMostFor \(1000 ms\)/,
    ],
  ];
  it.each(bad)('refuses %s when the class is defined, naming the method', (_label, options, message) => {
    const define = () => {
      class Jobs {
        @ScheduledLock(options)
        run(): void {}
      }
      return Jobs;
    };
    expect(define).toThrow(ScheduledLockConfigurationError);
    expect(define).toThrow(/@ScheduledLock\(\) on Jobs\.run/);
    expect(define).toThrow(message);
  });

  it('an instance not made by Nest (no ScheduledLockModule) gets a clear error', async () => {
    class Jobs {
      @ScheduledLock({ name: 'j', lockAtMostFor: '1s' })
      async run(): Promise<void> {}
    }
    await expect(new Jobs().run()).rejects.toThrow(/was not created by Nest with ScheduledLockModule/);
  });

  it('keeps @Cron working in either decorator order, and runs the job under the lock', async () => {
    let runs = 0;
    @Injectable()
    class Jobs {
      // A yearly cron: it never fires during the test, which calls the methods itself.
      @Cron('0 0 1 1 *', { name: 'below' })
      @ScheduledLock({ name: 'below', lockAtMostFor: '5s' })
      async below(): Promise<void> {
        runs++;
      }

      @ScheduledLock({ name: 'above', lockAtMostFor: '5s', lockAtLeastFor: '5s' })
      @Cron('0 0 1 1 *', { name: 'above' })
      async above(): Promise<void> {
        runs++;
      }
    }
    const dataSource = await createTestDataSource('sqlite');
    const moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        ScheduledLockModule.forRoot({ dataSource, tablePrefix: uniqueTablePrefix('sl'), schema: 'create' }),
      ],
      providers: [Jobs],
    }).compile();
    try {
      await moduleRef.init();
      expect([...moduleRef.get(SchedulerRegistry).getCronJobs().keys()].sort()).toEqual(['above', 'below']);
      const jobs = moduleRef.get(Jobs);
      await jobs.below();
      await jobs.above();
      expect(runs).toBe(2);
      // 'below' frees its lock when the run ends (no lockAtLeastFor): it runs again.
      await jobs.below();
      expect(runs).toBe(3);
      // 'above' keeps its lock for lockAtLeastFor (5 s): the same tick fired again is skipped.
      expect(await jobs.above()).toBeUndefined();
      expect(runs).toBe(3);
    } finally {
      await moduleRef.close();
      await dataSource.destroy();
    }
  });
});
