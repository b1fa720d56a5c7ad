import { describeEachDatabase } from '@holdfast/testing';
import type { InboxMessage } from '../src';
import { createInboxApp, TestClock, type InboxTestApp } from './inbox-test-app';
import { statement } from '@holdfast/core/kit';

const ORDER = { namespace: 'test', name: 'order-placed' };
const groupBy = (m: InboxMessage) => (m.payload as { g: string }).g;
/** Ids that sort in acceptance order (the test clock gives every message the same INSERTED). */
const message = (id: string) => ({ id, type: ORDER, payload: { g: id[0] } });

/**
 * Strict order per group (`groupBy`) across batches and nodes: a group's next message is only
 * claimed once the earlier ones are delivered, parked or expired; other groups go on meanwhile.
 */
describeEachDatabase(
  'inbox strict order per group',
  (ctx) => {
    const apps: InboxTestApp[] = [];
    const open = async (options: Parameters<typeof createInboxApp>[1] = {}) => {
      const app = await createInboxApp(ctx, { groupBy, ...options });
      apps.push(app);
      return app;
    };
    const count = async (table: string) =>
      Number(
        (await ctx.sql.query<{ c: unknown }>(statement(`SELECT COUNT(*) AS c FROM ${ctx.prefix}${table}`)))[0]
          .c,
      );

    beforeEach(async () => {
      for (const table of ['COR_MESSAGE', 'HOLDFAST_INBOX_GROUP']) {
        try {
          await ctx.sql.execute(statement(`DELETE FROM ${ctx.prefix}${table}`));
        } catch {
          // not created yet
        }
      }
    });
    afterEach(async () => {
      for (const app of apps.splice(0)) await app.close();
    });

    it('a failing head holds back its group across batches, not the other groups', async () => {
      const clock = new TestClock();
      const { acceptor, delivery, probe, management } = await open({
        clock: clock.read,
        batchSize: 1,
        retry: { maxRetries: 5, initialDelay: 1000, jitter: 0 },
      });
      let failures = 1;
      probe.behaviour = (m) => (m.id === 'a1' && failures-- > 0 ? new Error('a1 fails once') : undefined);
      await acceptor.acceptAll(['a1', 'a2', 'a3', 'b1', 'b2'].map(message));
      expect(await count('HOLDFAST_INBOX_GROUP')).toBe(5);

      for (let i = 0; i < 6; i++) await delivery.deliverDue();
      // a1 failed: a2 and a3 wait for it, b's group goes on.
      expect(probe.calls.map((m) => m.id)).toEqual(['a1', 'b1', 'b2']);
      expect((await management.list()).map((m) => m.id)).toEqual(['a1', 'a2', 'a3']);

      clock.advance(1000);
      for (let i = 0; i < 6; i++) await delivery.deliverDue();
      expect(probe.calls.map((m) => m.id)).toEqual(['a1', 'b1', 'b2', 'a1', 'a2', 'a3']);
      expect(await count('COR_MESSAGE')).toBe(0);
      // The group rows go with their messages.
      expect(await count('HOLDFAST_INBOX_GROUP')).toBe(0);
    });

    it('a whole run of a group in one batch is delivered in order, and a failure stops the rest', async () => {
      const clock = new TestClock();
      const { acceptor, delivery, probe } = await open({
        clock: clock.read,
        batchSize: 10,
        retry: { maxRetries: 5, initialDelay: 1000, jitter: 0 },
      });
      probe.behaviour = (m) => (m.id === 'a2' && m.retries === 0 ? new Error('a2 fails once') : undefined);
      await acceptor.acceptAll(['a1', 'a2', 'a3', 'b1'].map(message));
      expect(await delivery.deliverDue()).toMatchObject({ claimed: 4, delivered: 2, failed: 1, skipped: 1 });
      // a3 is not claimed again before a2 went through, although it was released.
      clock.advance(999);
      expect(await delivery.deliverDue()).toMatchObject({ claimed: 0 });
      clock.advance(1);
      expect(await delivery.deliverDue()).toMatchObject({ claimed: 2, delivered: 2 });
      const ids = probe.calls.map((m) => m.id);
      expect(ids.filter((id) => id.startsWith('a'))).toEqual(['a1', 'a2', 'a2', 'a3']);
      expect(ids.filter((id) => id.startsWith('b'))).toEqual(['b1']);
    });

    it('a parked head releases its group; an expired one too', async () => {
      const clock = new TestClock();
      const { acceptor, delivery, probe, management } = await open({
        clock: clock.read,
        batchSize: 1,
        retry: { maxRetries: 1, initialDelay: 1000, jitter: 0 },
      });
      probe.behaviour = (m) => (m.id === 'a1' ? new Error('a1 always fails') : undefined);
      await acceptor.acceptAll([
        message('a1'),
        message('a2'),
        { ...message('b1'), ttl: 'PT1S' },
        message('b2'),
      ]);
      expect(await delivery.deliverDue()).toMatchObject({ claimed: 1, failed: 1, parked: 1 });
      expect((await management.get('a1'))!.status).toBe('parked');
      clock.advance(2000); // b1 expires before its turn
      for (let i = 0; i < 4; i++) await delivery.deliverDue();
      expect(probe.calls.map((m) => m.id)).toEqual(['a1', 'a2', 'b2']);
      expect((await management.list()).map((m) => m.id)).toEqual(['a1', 'b1']);
    });

    it('messages accepted without groupBy are ungrouped: delivered as before', async () => {
      const plain = await open({ groupBy: undefined, deliver: false });
      await plain.acceptor.acceptAll(['a1', 'a2'].map(message));
      await plain.close();
      apps.splice(0);
      const clock = new TestClock();
      const { delivery, probe } = await open({
        clock: clock.read,
        batchSize: 1,
        retry: { initialDelay: 1000, jitter: 0 },
      });
      probe.behaviour = (m) => (m.id === 'a1' ? new Error('a1 fails') : undefined);
      await delivery.deliverDue();
      await delivery.deliverDue();
      expect(probe.calls.map((m) => m.id)).toEqual(['a1', 'a2']);
    });

    it('group rows go with their messages: management delete, expiry cleanup, and messages deleted elsewhere', async () => {
      const clock = new TestClock();
      const { acceptor, delivery, management } = await open({ clock: clock.read });
      await acceptor.acceptAll([
        message('a1'),
        { ...message('b1'), ttl: 'PT1S' },
        message('c1'),
        message('d1'),
      ]);
      expect(await count('HOLDFAST_INBOX_GROUP')).toBe(4);
      await management.delete('a1');
      expect(await count('HOLDFAST_INBOX_GROUP')).toBe(3);
      // c1 deleted by someone else (a Java client): its group row is an orphan until the cleanup.
      await ctx.sql.execute(statement(`DELETE FROM ${ctx.prefix}COR_MESSAGE WHERE ID = 'c1'`));
      clock.advance(2000);
      expect(await delivery.cleanupExpired()).toBe(1);
      expect(await count('HOLDFAST_INBOX_GROUP')).toBe(1);
      expect((await management.list()).map((m) => m.id)).toEqual(['d1']);
    });

    it("acceptAll in parallel chunks writes every group row, in the messages' INSERTED", async () => {
      const { acceptor, delivery, probe } = await open({ acceptChunkSize: 100, batchSize: 500 });
      const messages = Array.from({ length: 2000 }, (_, i) => ({
        id: `m${String(i).padStart(5, '0')}`,
        type: ORDER,
        payload: { g: `g${i % 7}` },
      }));
      expect((await acceptor.acceptAll(messages)).every((r) => r.accepted)).toBe(true);
      expect(await count('HOLDFAST_INBOX_GROUP')).toBe(2000);
      const mismatched = await ctx.sql.query(
        statement(
          `SELECT g.ID FROM ${ctx.prefix}HOLDFAST_INBOX_GROUP g JOIN ${ctx.prefix}COR_MESSAGE m ON m.ID = g.ID ` +
            `WHERE g.INSERTED <> m.INSERTED`,
        ),
      );
      expect(mismatched).toEqual([]);
      for (let i = 0; i < 10 && probe.calls.length < 2000; i++) await delivery.deliverDue();
      const ids = probe.calls.map((m) => m.id);
      for (let g = 0; g < 7; g++) {
        const group = messages.filter((_, i) => i % 7 === g).map((m) => m.id);
        expect(ids.filter((id) => group.includes(id))).toEqual(group);
      }
    });

    // Two competing nodes (PostgreSQL, MariaDB): a message in one node's hands holds its group.
    it('a group held by one node is skipped by the other, which takes the other groups', async () => {
      if (ctx.db === 'sqlite') return; // one deliverer (leader mode)
      const first = await open({ batchSize: 10 });
      const second = await open({ batchSize: 10 });
      let release!: () => void;
      const slow = new Promise<void>((resolve) => (release = resolve));
      first.probe.behaviour = (m) => (m.id === 'a1' ? slow : undefined);
      await first.acceptor.acceptAll(['a1', 'a2', 'b1', 'b2'].map(message));
      // The first node takes the first batch: both groups, in runs.
      const running = first.delivery.deliverDue();
      for (let i = 0; i < 200 && !first.probe.calls.some((m) => m.id === 'a1'); i++)
        await new Promise((r) => setTimeout(r, 10));
      await first.acceptor.acceptAll(['a3', 'c1'].map(message));
      // The second node: a3 waits behind a1 and a2 (held by the first node); c1 is free.
      expect(await second.delivery.deliverDue()).toMatchObject({ claimed: 1, delivered: 1 });
      expect(second.probe.calls.map((m) => m.id)).toEqual(['c1']);
      release();
      await running;
      expect(first.probe.calls.map((m) => m.id).sort()).toEqual(['a1', 'a2', 'b1', 'b2']);
      expect(await second.delivery.deliverDue()).toMatchObject({ claimed: 1, delivered: 1 });
      expect(second.probe.calls.map((m) => m.id)).toEqual(['c1', 'a3']);
    });
  },
  { tables: ['COR_MESSAGE', 'HOLDFAST_INBOX_GROUP', 'SIMBA_MUTEX', 'HOLDFAST_INBOX_LEASE'] },
);
