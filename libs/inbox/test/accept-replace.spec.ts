import { statement } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import { InboxDeliveryFencedError, InvalidMessageError, type InboxMessage } from '../src';
import { createInboxApp, TestClock, type InboxTestApp } from './inbox-test-app';

const type = { namespace: 'test', name: 'order-placed' };
const MINUTE = 60_000;
const groupBy = (m: InboxMessage) => (m.payload as { g: string }).g;

/**
 * Replace and debounce by id (`onExisting`): an id that exists is accepted anew under it instead
 * of refused; `debounce` also resets its time. No column beyond the seed's.
 */
describeEachDatabase(
  'MessageAcceptor onExisting: replace, debounce',
  (ctx) => {
    const apps: InboxTestApp[] = [];
    let clock: TestClock;
    const open = async (options: Parameters<typeof createInboxApp>[1] = {}) => {
      const app = await createInboxApp(ctx, { clock: clock.read, ...options });
      apps.push(app);
      return app;
    };
    beforeEach(async () => {
      clock = new TestClock();
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
    const delivered = (node: InboxTestApp) => node.probe.calls.map((m) => [m.id, m.payload]);

    it("'keep' (the default) still refuses an id that exists and changes nothing", async () => {
      const node = await open();
      await node.acceptor.accept({ id: 'k', type, payload: { v: 1 } });
      expect(await node.acceptor.accept({ id: 'k', type, payload: { v: 2 } })).toEqual({
        id: 'k',
        accepted: false,
      });
      expect(await node.acceptor.accept({ id: 'k', type, payload: { v: 3 }, onExisting: 'keep' })).toEqual({
        id: 'k',
        accepted: false,
      });
      await node.delivery.deliverDue();
      expect(delivered(node)).toEqual([['k', { v: 1 }]]);
    });

    it('replace: the waiting message takes the new content, type and ttl, delivered once', async () => {
      const node = await open();
      await node.acceptor.accept({ id: 'r', type, payload: { v: 1 } });
      const result = await node.acceptor.accept({
        id: 'r',
        type,
        payload: { v: 2 },
        ttl: 'PT1H',
        onExisting: 'replace',
      });
      expect(result).toEqual({ id: 'r', accepted: true, replaced: true });
      // An id that does not exist is inserted as usual.
      expect(
        await node.acceptor.accept({ id: 'new', type, payload: { v: 0 }, onExisting: 'replace' }),
      ).toEqual({
        id: 'new',
        accepted: true,
      });
      const info = (await node.management.get('r'))!;
      expect(info.ttl).toBe('PT1H');
      expect(info.expiration!.getTime()).toBe(clock.now + 3_600_000);
      await node.delivery.deliverDue();
      expect(delivered(node).sort()).toEqual([
        ['new', { v: 0 }],
        ['r', { v: 2 }],
      ]);
      expect((await node.management.count()).total).toBe(0);
    });

    it('replace keeps the time of a scheduled message; debounce moves it; a paused one stays paused', async () => {
      const node = await open();
      const start = clock.now;
      await node.acceptor.acceptAll([
        { id: 'keep-time', type, payload: { v: 1 }, delay: '10m' },
        { id: 'move-time', type, payload: { v: 1 }, delay: '10m' },
        { id: 'paused', type, payload: { v: 1 } },
      ]);
      await node.management.pause('paused').catch(() => undefined);
      const pausable = (await node.management.get('paused'))!.status === 'paused';
      clock.advance(MINUTE);
      const results = await node.acceptor.acceptAll([
        { id: 'keep-time', type, payload: { v: 2 }, onExisting: 'replace' },
        { id: 'move-time', type, payload: { v: 2 }, delay: '10m', onExisting: 'debounce' },
        { id: 'paused', type, payload: { v: 2 }, onExisting: 'debounce' },
      ]);
      expect(results.map((r) => r.replaced)).toEqual([true, true, true]);
      // 1 ms later: a lease of a node delivering it now would end there (see the next test).
      expect((await node.management.get('keep-time'))!.nextRetry!.getTime()).toBe(start + 10 * MINUTE + 1);
      expect((await node.management.get('move-time'))!.nextRetry!.getTime()).toBe(start + 11 * MINUTE);
      if (pausable) expect((await node.management.get('paused'))!.status).toBe('paused');

      clock.advance(9 * MINUTE + 1);
      await node.delivery.deliverDue();
      expect(delivered(node)).toEqual([['keep-time', { v: 2 }]]);
      clock.advance(MINUTE);
      await node.delivery.deliverDue();
      expect(delivered(node)).toEqual([
        ['keep-time', { v: 2 }],
        ['move-time', { v: 2 }],
      ]);
    });

    it('debounce: repeated accepts push the time out; one delivery, the last content', async () => {
      const node = await open();
      for (let v = 1; v <= 4; v++) {
        await node.acceptor.accept({ id: 'd', type, payload: { v }, delay: '30s', onExisting: 'debounce' });
        clock.advance(20_000);
        await node.delivery.deliverDue();
      }
      expect(delivered(node)).toEqual([]);
      clock.advance(10_000);
      await node.delivery.deliverDue();
      expect(delivered(node)).toEqual([['d', { v: 4 }]]);
    });

    it('a message being delivered: the replace supersedes that delivery, the new content follows', async () => {
      const node = await open({ visibilityTimeout: '5m' });
      await node.acceptor.accept({ id: 'busy', type, payload: { v: 1 } });
      let replaced: unknown;
      let fenced: unknown;
      node.probe.behaviour = async (message, { claim }) => {
        if ((message.payload as { v: number }).v !== 1) return;
        replaced = await node.acceptor.accept({ id: 'busy', type, payload: { v: 2 }, onExisting: 'replace' });
        // This delivery no longer holds the message: a fenced write is refused.
        fenced = await claim.fenced(ctx.dataSource, async () => 'written').catch((e: unknown) => e);
      };
      await node.delivery.deliverDue();
      expect(replaced).toEqual({ id: 'busy', accepted: true, replaced: true });
      expect(fenced).toBeInstanceOf(InboxDeliveryFencedError);
      // The first delivery's success did not delete the replaced message.
      expect((await node.management.payload('busy'))?.payload).toEqual({ v: 2 });
      await node.delivery.deliverDue();
      expect(delivered(node)).toEqual([['busy', { v: 1 }]]);
      // Delivered again, with the new content, once that delivery's lease is over.
      clock.advance(5 * MINUTE + 1);
      await node.delivery.deliverDue();
      expect(delivered(node)).toEqual([
        ['busy', { v: 1 }],
        ['busy', { v: 2 }],
      ]);
      expect((await node.management.count()).total).toBe(0);
    });

    it('replace gives a parked message its attempts back', async () => {
      const node = await open({ retry: { maxRetries: 1, initialDelay: 1000, jitter: 0 } });
      node.probe.behaviour = (m) =>
        (m.payload as { v: number }).v === 1 ? new Error('bad content') : undefined;
      await node.acceptor.accept({ id: 'p', type, payload: { v: 1 } });
      await node.delivery.deliverDue();
      expect((await node.management.get('p'))!.status).toBe('parked');
      await node.acceptor.accept({ id: 'p', type, payload: { v: 2 }, onExisting: 'replace' });
      const info = (await node.management.get('p'))!;
      expect(info.retries).toBe(0);
      expect(info.error).toBeUndefined();
      clock.advance(1000);
      await node.delivery.deliverDue();
      expect(delivered(node)).toEqual([
        ['p', { v: 1 }],
        ['p', { v: 2 }],
      ]);
    });

    it('in the caller’s transaction: a rollback keeps the old content, a commit the new', async () => {
      const node = await open();
      await node.acceptor.accept({ id: 't', type, payload: { v: 1 } });
      await ctx.dataSource
        .transaction(async (manager) => {
          const r = await node.acceptor.accept(
            { id: 't', type, payload: { v: 2 }, onExisting: 'replace' },
            { manager },
          );
          expect(r).toEqual({ id: 't', accepted: true, replaced: true });
          throw new Error('roll back');
        })
        .catch(() => undefined);
      expect((await node.management.payload('t'))?.payload).toEqual({ v: 1 });
      const results = await ctx.dataSource.transaction((manager) =>
        node.acceptor.acceptAll(
          [
            { id: 't', type, payload: { v: 3 }, onExisting: 'debounce', delay: '1m' },
            { id: 'u', type, payload: { v: 1 }, onExisting: 'debounce' },
          ],
          { manager },
        ),
      );
      expect(results).toEqual([
        { id: 't', accepted: true, replaced: true },
        { id: 'u', accepted: true },
      ]);
      expect((await node.management.payload('t'))?.payload).toEqual({ v: 3 });
      expect((await node.management.get('t'))!.nextRetry!.getTime()).toBe(clock.now + MINUTE);
    });

    it('grouped: a replaced message is accepted anew, behind the later ones of its group', async () => {
      const node = await open({ groupBy, batchSize: 1 });
      await node.acceptor.acceptAll([
        { id: 'a1', type, payload: { g: 'a', v: 1 } },
        { id: 'a2', type, payload: { g: 'a', v: 1 } },
      ]);
      clock.advance(1000);
      await node.acceptor.accept({ id: 'a1', type, payload: { g: 'a', v: 2 }, onExisting: 'replace' });
      for (let i = 0; i < 3; i++) await node.delivery.deliverDue();
      expect(delivered(node)).toEqual([
        ['a2', { g: 'a', v: 1 }],
        ['a1', { g: 'a', v: 2 }],
      ]);
    });

    it('grouped, in the caller’s transaction: the message and its group row move together', async () => {
      const node = await open({ groupBy, batchSize: 1 });
      await node.acceptor.acceptAll([
        { id: 'b1', type, payload: { g: 'b', v: 1 } },
        { id: 'c1', type, payload: { g: 'c', v: 1 } },
      ]);
      clock.advance(1000);
      // b1 moves to group c, behind c1.
      const result = await ctx.dataSource.transaction((manager) =>
        node.acceptor.accept(
          { id: 'b1', type, payload: { g: 'c', v: 2 }, onExisting: 'replace' },
          { manager },
        ),
      );
      expect(result).toEqual({ id: 'b1', accepted: true, replaced: true });
      const groups = await ctx.sql.query<{ id: string; group_key: string }>(
        statement(
          `SELECT ID AS id, GROUP_KEY AS group_key FROM ${ctx.prefix}HOLDFAST_INBOX_GROUP ORDER BY ID`,
        ),
      );
      expect(groups).toEqual([
        { id: 'b1', group_key: 'c' },
        { id: 'c1', group_key: 'c' },
      ]);
      for (let i = 0; i < 3; i++) await node.delivery.deliverDue();
      expect(delivered(node)).toEqual([
        ['c1', { g: 'c', v: 1 }],
        ['b1', { g: 'c', v: 2 }],
      ]);
    });

    it('refuses an unknown onExisting with InvalidMessageError, nothing stored', async () => {
      const node = await open();
      const error = await node.acceptor
        .acceptAll([
          { type, payload: {} },
          { type, payload: {}, onExisting: 'merge' as 'replace' },
        ])
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidMessageError);
      expect((error as Error).message).toMatch(
        /'onExisting' = "merge": must be 'keep', 'replace' or 'debounce'/,
      );
      expect((await node.management.count()).total).toBe(0);
    });
  },
  { tables: ['COR_MESSAGE', 'HOLDFAST_INBOX_GROUP', 'SIMBA_MUTEX', 'HOLDFAST_INBOX_LEASE'] },
);
