import { statement } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import { InboxHistory } from '../src/internal';
import { createInboxApp, TestClock, type InboxTestApp } from './inbox-test-app';

const ORDER = { namespace: 'test', name: 'order-placed' };
const TABLES = [
  'COR_MESSAGE',
  'HOLDFAST_INBOX_HISTORY',
  'HOLDFAST_INBOX_STATS',
  'HOLDFAST_INBOX_LEASE',
  'simba_mutex',
];

/** The opt-in history (every attempt with its error) and the per-minute stats (issue #48). */
describeEachDatabase(
  'inbox history and stats',
  (ctx) => {
    let inbox: InboxTestApp | undefined;
    const clock = new TestClock();
    const historyRows = async (prefix = ctx.prefix): Promise<number> =>
      Number(
        (
          await ctx.sql.query<{ c: unknown }>(
            statement(`SELECT COUNT(*) AS c FROM ${prefix}HOLDFAST_INBOX_HISTORY`),
          )
        )[0].c,
      );
    const open = async (options: Parameters<typeof createInboxApp>[1] = {}) => {
      inbox = await createInboxApp(ctx, {
        clock: clock.read,
        retry: { initialDelay: '1s', jitter: 0, maxRetries: 5 },
        ...options,
      });
      return { ...inbox, history: inbox.app.get(InboxHistory) };
    };

    beforeEach(async () => {
      for (const table of ['COR_MESSAGE', 'HOLDFAST_INBOX_HISTORY', 'HOLDFAST_INBOX_STATS']) {
        try {
          await ctx.sql.execute(statement(`DELETE FROM ${ctx.prefix}${table}`));
        } catch {
          // not created yet
        }
      }
    });
    afterEach(async () => {
      await inbox?.close();
      inbox = undefined;
    });

    it('keeps nothing and creates no table when off', async () => {
      const prefix = `${ctx.prefix}off_`;
      const { acceptor, delivery, management, history } = await open({ tablePrefix: prefix });
      await acceptor.accept({ id: 'off-1', type: ORDER, payload: {} });
      expect(await delivery.deliverDue()).toMatchObject({ delivered: 1 });
      expect(await history.flush()).toBe(0);
      await delivery.cleanupExpired();
      expect(await management.history('off-1')).toEqual([]);
      expect(await management.stats()).toEqual([]);
      // (toHaveProperty: better-sqlite3's errors may come from another test file's realm)
      await expect(historyRows(prefix)).rejects.toHaveProperty('message');
      await expect(
        (async () => ctx.sql.query(statement(`SELECT COUNT(*) AS c FROM ${prefix}HOLDFAST_INBOX_STATS`)))(),
      ).rejects.toHaveProperty('message');
      await ctx.sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}COR_MESSAGE`));
    });

    it('shows every attempt of a message that failed twice and then succeeded, with both errors', async () => {
      const { acceptor, delivery, management, probe, history } = await open({ history: true });
      let calls = 0;
      probe.behaviour = () => (++calls <= 2 ? new Error(`upstream down #${calls}\n  at stack`) : undefined);
      await acceptor.accept({ id: 'h-1', type: ORDER, payload: { n: 1 } });
      for (let i = 0; i < 3; i++) {
        await delivery.deliverDue();
        clock.advance(60_000);
      }
      expect(calls).toBe(3);
      // (the periodic flush may have written some of the three already: the rows below count)
      await history.flush();
      const entries = await management.history('h-1');
      expect(entries.map((e) => [e.outcome, e.attempt, e.error?.split('\n')[0]])).toEqual([
        ['failed', 1, 'Error: upstream down #1'],
        ['failed', 2, 'Error: upstream down #2'],
        ['delivered', 3, undefined],
      ]);
      expect(entries[0].type).toEqual(ORDER);
      expect(entries[0].at.getTime()).toBeLessThan(entries[2].at.getTime());
      expect(await management.get('h-1')).toBeUndefined();
      const failures = await management.recentAttempts(ORDER, { outcome: 'failed' });
      expect(failures.map((e) => e.attempt)).toEqual([2, 1]);
    });

    it('records a parked message as parked, with its last error', async () => {
      const { acceptor, delivery, management, probe, history } = await open({
        history: true,
        retry: { maxRetries: 1, initialDelay: '1s', jitter: 0 },
      });
      probe.behaviour = () => new Error('bad payload');
      await acceptor.accept({ id: 'p-1', type: ORDER, payload: {} });
      await delivery.deliverDue();
      await history.flush();
      expect((await management.history('p-1')).map((e) => [e.outcome, e.attempt, e.error])).toEqual([
        ['parked', 1, expect.stringContaining('bad payload')],
      ]);
    });

    it('prunes by count at the cleanup tick, the oldest first', async () => {
      const { acceptor, delivery, management, history } = await open({ history: { maxRows: 3 } });
      for (let i = 1; i <= 5; i++) {
        await acceptor.accept({ id: `c-${i}`, type: ORDER, payload: {} });
        await delivery.deliverDue();
        clock.advance(1000);
        await history.flush();
      }
      expect(await historyRows()).toBe(5);
      await delivery.cleanupExpired();
      expect(await historyRows()).toBe(3);
      expect(await management.history('c-1')).toEqual([]);
      expect(await management.history('c-5')).toHaveLength(1);
    });

    it('prunes by age at the cleanup tick', async () => {
      const { acceptor, delivery, history } = await open({ history: { retention: '1h' } });
      await acceptor.accept({ id: 'a-1', type: ORDER, payload: {} });
      await delivery.deliverDue();
      await history.flush();
      clock.advance(30 * 60_000);
      await acceptor.accept({ id: 'a-2', type: ORDER, payload: {} });
      await delivery.deliverDue();
      await history.flush();
      clock.advance(45 * 60_000);
      await delivery.cleanupExpired();
      expect(await historyRows()).toBe(1);
      clock.advance(60 * 60_000);
      await delivery.cleanupExpired();
      expect(await historyRows()).toBe(0);
    });

    it('notes expired messages deleted by the cleanup', async () => {
      const { acceptor, delivery, management, history } = await open({ history: true });
      await acceptor.accept({ id: 'e-1', type: ORDER, payload: {}, ttl: 'PT1M' });
      clock.advance(120_000);
      expect(await delivery.cleanupExpired()).toBe(1);
      await history.flush();
      expect((await management.history('e-1')).map((e) => e.outcome)).toEqual(['expired']);
    });

    it('never holds up the delivery while it cannot write: bounded, what does not fit is dropped and counted', async () => {
      const { acceptor, delivery, history } = await open({ history: { maxBuffered: 2 } });
      await ctx.sql.execute(statement(`DROP TABLE ${ctx.prefix}HOLDFAST_INBOX_HISTORY`));
      for (const id of ['d-1', 'd-2', 'd-3']) await acceptor.accept({ id, type: ORDER, payload: {} });
      expect(await delivery.deliverDue()).toMatchObject({ delivered: 3 });
      expect(history.dropped).toBe(1);
      await expect(history.flush()).rejects.toHaveProperty('message');
      expect(history.dropped).toBe(1); // the two kept wait for the next flush
    });

    it('refuses a bad history option at startup, naming it', async () => {
      await expect(open({ history: { maxRows: 0 } })).rejects.toThrow(/history.*maxRows|maxRows/);
    });

    it('keeps per-minute stats that survive a restart', async () => {
      clock.now = Math.floor(clock.now / 60_000) * 60_000 + 10_000;
      const first = await open({ stats: true });
      first.probe.behaviour = (m) => (m.id === 's-bad' ? new Error('nope') : undefined);
      for (const id of ['s-1', 's-2', 's-bad']) await first.acceptor.accept({ id, type: ORDER, payload: {} });
      await first.delivery.deliverDue();
      await first.acceptor.accept({ id: 's-3', type: ORDER, payload: {} });
      await first.history.flushStats();
      await first.delivery.cleanupExpired(); // the sample: depth 2 (s-bad retrying, s-3 due)
      await first.close();
      inbox = undefined;

      const second = await open({ stats: true });
      const minutes = await second.management.stats({ minutes: 60 });
      expect(minutes).toHaveLength(1);
      expect(minutes[0]).toMatchObject({ delivered: 2, failed: 1, parked: 0, depth: 2, parkedNow: 0 });
      expect(typeof minutes[0].leader).toBe('string');
      expect(minutes[0].minute.getTime() % 60_000).toBe(0);
      await expect(second.management.stats({ minutes: 0 })).rejects.toThrow(/minutes/);
    });
  },
  { tables: TABLES },
);
