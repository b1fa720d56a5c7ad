import type { INestApplication } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { tempSqliteFile, waitUntil } from '@holdfast/testing';

/**
 * Every Holdfast timer of the demo (all four modules on SQLite) is in @nestjs/schedule's
 * SchedulerRegistry under its documented name, and app.close() leaves none behind.
 */
describe('Holdfast timers in SchedulerRegistry (the demo app on SQLite)', () => {
  const timeoutHandles = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  let app: INestApplication | undefined;

  afterEach(async () => {
    await app?.close();
  });

  it('lists every loop under holdfast:<lib>:<what>, and none is left after app.close()', async () => {
    process.env.DEMO_SQLITE_FILE = tempSqliteFile('timers');
    process.env.DATABASE_URL = '';
    const before = timeoutHandles();
    const { AppModule } = await import('../src/app.module');
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication();
    await app.init();
    const registry = app.get(SchedulerRegistry);

    const expected = [
      'holdfast:simba:tick:simba_mutex',
      'holdfast:simba:deadline:demo-leader:',
      'holdfast:locker:keep-alive:demo-master',
      'holdfast:inbox:poll:COR_MESSAGE',
      'holdfast:inbox:cleanup:COR_MESSAGE',
      'holdfast:failover:cleanup',
    ];
    // The names come and go as each one-shot timer fires and is re-armed: collect what is seen
    // until every expected one has shown up (the owner's deadline once it leads, the keep-alive
    // once it is master).
    const seen = new Set<string>();
    await waitUntil(
      () => {
        for (const name of registry.getTimeouts()) seen.add(name);
        return expected.every((e) => [...seen].some((name) => name.startsWith(e)));
      },
      { timeout: 30_000, interval: 5, message: `timers ${expected.join(', ')}` },
    );
    expect([...seen].every((name) => name.startsWith('holdfast:'))).toBe(true);
    // Every cleanup is a Holdfast timer, none a cron job of the app's ScheduleModule.
    expect([...registry.getCronJobs().keys()].filter((name) => name.startsWith('holdfast:'))).toEqual([]);

    await app.close();
    app = undefined;
    expect(registry.getTimeouts().filter((name) => name.startsWith('holdfast:'))).toEqual([]);
    expect(registry.getIntervals()).toEqual([]);
    // No timer of any kind outlives the app (ours are one-shot and cleared at shutdown).
    await waitUntil(() => timeoutHandles() <= before, {
      timeout: 10_000,
      message: `the Timeout handles to drop back to ${before} (now ${timeoutHandles()})`,
    });
  }, 60_000);
});
