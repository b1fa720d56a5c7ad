/**
 * One rule for every Holdfast cleanup: it runs on Holdfast's own timer, with or without the
 * application's ScheduleModule, and with it the timer is listed in the SchedulerRegistry. (The
 * failover's: libs/failover/test/failover-cleanup.spec.ts.)
 */
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { describeEachDatabase, waitUntil, type TestDatabaseContext } from '@holdfast/testing';
import { createInboxApp } from './inbox-test-app';
import { statement } from '@holdfast/core/kit';

jest.setTimeout(60_000);

describeEachDatabase(
  'inbox expiry cleanup: scheduled with and without ScheduleModule',
  (ctx: TestDatabaseContext) => {
    const rows = async () =>
      Number(
        (
          await ctx.sql.query<{ n: unknown }>(statement(`SELECT COUNT(*) AS n FROM ${ctx.prefix}COR_MESSAGE`))
        )[0].n,
      );

    for (const withSchedule of [false, true]) {
      it(`deletes expired messages on its own ${withSchedule ? 'with' : 'without'} ScheduleModule`, async () => {
        const inbox = await createInboxApp(
          ctx,
          { cleanupInterval: '1s' },
          { imports: withSchedule ? [ScheduleModule.forRoot()] : [] },
        );
        try {
          if (withSchedule) {
            const timers = inbox.app.get(SchedulerRegistry).getTimeouts();
            expect(timers).toContain(`holdfast:inbox:cleanup:${ctx.prefix}COR_MESSAGE`);
          }
          await inbox.acceptor.accept({
            id: `exp-${withSchedule}`,
            type: { name: 'nobody-handles' },
            payload: 1,
            ttl: 'PT1S',
          });
          await waitUntil(async () => (await rows()) === 0, {
            timeout: 20_000,
            message: 'the expired message to be cleaned up',
          });
        } finally {
          await inbox.close();
        }
      });
    }
  },
  { tables: ['COR_MESSAGE', 'HOLDFAST_INBOX_LEASE', 'HOLDFAST_INBOX_GROUP', 'simba_mutex'], tag: 'ics' },
);
