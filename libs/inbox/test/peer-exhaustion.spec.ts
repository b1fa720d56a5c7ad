import { describeEachDatabase } from '@holdfast/testing';
import { FAR_FUTURE } from '../src/internal';
import { createInboxApp, TestClock, type InboxTestApp } from './inbox-test-app';
import { seedCorMessageDdl } from './seed-ddl';
import { statement } from '@holdfast/core/kit';

const ORDER = { namespace: 'test', name: 'order-placed' };

/**
 * The rows of camunda-bpm-correlate's repository test fixture (`some-messages.sql`): ID, INSERTED,
 * RETRIES, NEXT_RETRY and ERROR as there. Its payload ('B00' under JACKSON) is no JSON and its
 * type has no handler here, so each row carries a JSON payload of the test handler's type.
 */
const PEER_FIXTURE: {
  id: string;
  inserted: string;
  retries: number;
  nextRetry: string | null;
  error: string | null;
}[] = [
  { id: '4711', inserted: '2022-10-01T10:00:00Z', retries: 0, nextRetry: null, error: null },
  { id: '4712', inserted: '2022-10-01T10:00:10Z', retries: 0, nextRetry: null, error: null },
  {
    id: '4713',
    inserted: '2022-10-01T10:10:01Z',
    retries: 1,
    nextRetry: '2022-10-01T10:11:00Z',
    error: 'someError',
  },
  {
    id: '4714',
    inserted: '2022-10-01T10:12:02Z',
    retries: 3,
    nextRetry: '2022-10-01T10:13:00Z',
    error: 'another',
  },
  {
    id: '4715',
    inserted: '2022-10-01T10:12:03Z',
    retries: 1,
    nextRetry: '4999-12-03T10:15:30Z',
    error: 'another',
  },
  {
    id: '4716',
    inserted: '2022-10-01T10:00:04Z',
    retries: 0,
    nextRetry: '4999-12-03T10:15:30Z',
    error: null,
  },
];
/** The peer's maxRetries in its repository test. */
const PEER_MAX_RETRIES = 3;

describeEachDatabase(
  "camunda-bpm-correlate's exhaustion rule (RETRIES >= maxRetries, whatever NEXT_RETRY says)",
  (ctx) => {
    let inbox: InboxTestApp | undefined;
    const table = () => `${ctx.prefix}COR_MESSAGE`;
    const seedTime = (iso: string) => ctx.sql.dialect.timestampParam(new Date(iso));
    const time = (v: unknown) => (v === null ? null : ctx.sql.dialect.readTimestamp(v).getTime());

    beforeAll(async () => {
      for (const ddl of seedCorMessageDdl(ctx.db, ctx.prefix)) await ctx.sql.execute(statement(ddl));
    });
    beforeEach(async () => {
      await ctx.sql.execute(statement(`DELETE FROM ${table()}`));
      for (const row of PEER_FIXTURE) {
        await ctx.sql.execute(
          statement(
            `INSERT INTO ${table()} (ID, PAYLOAD_ENCODING, PAYLOAD_TYPE_NAMESPACE, PAYLOAD_TYPE_NAME, PAYLOAD_TYPE_REVISION, PAYLOAD, ` +
              `INSERTED, TTL_DURATION, EXPIRATION, RETRIES, NEXT_RETRY, ERROR) VALUES (${ctx.sql.dialect.placeholders(12)})`,
            [
              row.id,
              'JACKSON',
              ORDER.namespace,
              ORDER.name,
              null,
              Buffer.from(JSON.stringify({ id: row.id })),
              seedTime(row.inserted),
              null,
              null,
              row.retries,
              row.nextRetry === null ? null : seedTime(row.nextRetry),
              row.error,
            ],
          ),
        );
      }
    });
    afterEach(async () => {
      await inbox?.close();
      inbox = undefined;
    });

    const raw = async (id: string) => {
      const [row] = await ctx.sql.query<{ retries: unknown; next_retry: unknown }>(
        statement(
          `SELECT RETRIES AS retries, NEXT_RETRY AS next_retry FROM ${table()} WHERE ID = ${ctx.sql.dialect.placeholder(1)}`,
          [id],
        ),
      );
      return { retries: Number(row.retries), nextRetry: time(row.next_retry) };
    };

    it('statuses, counts and lists at fixed times follow the peer', async () => {
      // Before 4713's next retry (10:11) and 4714's (10:13).
      const clock = new TestClock(Date.parse('2022-10-01T10:10:30Z'));
      inbox = await createInboxApp(ctx, { clock: clock.read, retry: { maxRetries: PEER_MAX_RETRIES } });
      const { management } = inbox;
      const statuses = async () => (await management.list()).map((m) => [m.id, m.status]);
      expect(await statuses()).toEqual([
        ['4711', 'due'],
        ['4716', 'paused'],
        ['4712', 'due'],
        ['4713', 'retrying'],
        ['4714', 'parked'],
        ['4715', 'paused'],
      ]);
      // After both: 4713 is due, 4714 stays parked (its NEXT_RETRY has passed, its retries have not).
      clock.now = Date.parse('2022-10-01T10:20:00Z');
      expect(await statuses()).toEqual([
        ['4711', 'due'],
        ['4716', 'paused'],
        ['4712', 'due'],
        ['4713', 'due'],
        ['4714', 'parked'],
        ['4715', 'paused'],
      ]);
      expect(await management.count()).toEqual({
        total: 6,
        due: 3,
        retrying: 0,
        parked: 1,
        paused: 2,
        expired: 0,
      });
      expect((await management.list({ status: 'due' })).map((m) => m.id)).toEqual(['4711', '4712', '4713']);
      expect((await management.list({ status: 'parked' })).map((m) => m.id)).toEqual(['4714']);
      expect((await management.get('4714'))!.status).toBe('parked');
    });

    it('never delivers the exhausted row; retry now makes it due for Holdfast and the peer', async () => {
      const clock = new TestClock(Date.parse('2022-10-01T10:20:00Z'));
      inbox = await createInboxApp(ctx, {
        clock: clock.read,
        retry: { maxRetries: PEER_MAX_RETRIES, jitter: 0 },
      });
      const { management, delivery, probe } = inbox;
      expect(await delivery.deliverDue()).toMatchObject({ claimed: 3, delivered: 3 });
      expect(probe.calls.map((m) => m.id)).toEqual(['4711', '4712', '4713']);
      expect(await delivery.deliverDue()).toMatchObject({ claimed: 0 });
      expect(await raw('4714')).toEqual({ retries: 3, nextRetry: Date.parse('2022-10-01T10:13:00Z') });

      await management.retryNow('4714');
      // The peer's reading of this row: RETRIES below its maxRetries (not MAX_RETRIES_REACHED), a
      // NEXT_RETRY that has come (its batch filter's "due for retry").
      const retried = await raw('4714');
      expect(retried).toEqual({ retries: PEER_MAX_RETRIES - 1, nextRetry: clock.now });
      expect((await management.get('4714'))!.status).toBe('due');
      expect(await delivery.deliverDue()).toMatchObject({ claimed: 1, delivered: 1 });
      expect(probe.calls.map((m) => m.id)).toEqual(['4711', '4712', '4713', '4714']);
    });

    it('resume leaves what the peer resumes to: NULL without failed attempts, now with some', async () => {
      const clock = new TestClock(Date.parse('2022-10-01T10:20:00Z'));
      inbox = await createInboxApp(ctx, { clock: clock.read, retry: { maxRetries: PEER_MAX_RETRIES } });
      const { management } = inbox;
      expect(await raw('4715')).toEqual({ retries: 1, nextRetry: FAR_FUTURE });
      expect(await management.resume('4715')).toBe(true);
      expect(await management.resume('4716')).toBe(true);
      expect(await raw('4715')).toEqual({ retries: 1, nextRetry: clock.now });
      expect(await raw('4716')).toEqual({ retries: 0, nextRetry: null });
      expect((await management.list({ status: 'due' })).map((m) => m.id)).toEqual([
        '4711',
        '4716',
        '4712',
        '4713',
        '4715',
      ]);
      // A paused message that is also exhausted is parked (the peer's MAX_RETRIES_REACHED comes first).
      await management.pause('4714');
      expect((await management.get('4714'))!.status).toBe('parked');
    });
  },
  { tables: ['COR_MESSAGE', 'SIMBA_MUTEX', 'HOLDFAST_INBOX_LEASE'] },
);
