import { describeEachDatabase } from '@holdfast/testing';
import { InvalidMessageError, type AcceptMessage } from '../src';
import { createInboxApp, TestClock, type InboxTestApp } from './inbox-test-app';
import { seedCorMessageDdl, type SeedLayout } from './seed-ddl';
import { statement } from '@holdfast/core/kit';

const type = { namespace: 'test', name: 'order-placed' };
const MINUTE = 60_000;

describeEachDatabase(
  'MessageAcceptor scheduling: deliverAt, delay (NEXT_RETRY as "not before")',
  (ctx) => {
    describe('with a test clock', () => {
      let node: InboxTestApp;
      const clock = new TestClock();
      beforeAll(async () => {
        node = await createInboxApp(ctx, { clock: clock.read });
      });
      afterAll(() => node?.close());

      it('deliverAt and delay hold a message back until its time; the others go at once', async () => {
        const start = clock.now;
        const [now, at, later] = await node.acceptor.acceptAll([
          { type, payload: { n: 'now' } },
          { type, payload: { n: 'at' }, deliverAt: new Date(start + 2 * MINUTE) },
          { type, payload: { n: 'later' }, delay: '5m' },
        ]);
        const single = await node.acceptor.accept({ type, payload: { n: 'single' }, delay: 3 * MINUTE });
        const delivered = () => node.probe.calls.map((m) => m.id);

        await node.delivery.deliverDue();
        expect(delivered()).toEqual([now.id]);
        expect((await node.management.get(at.id))?.status).toBe('retrying');
        expect((await node.management.get(at.id))?.nextRetry?.getTime()).toBe(start + 2 * MINUTE);
        expect((await node.management.get(later.id))?.nextRetry?.getTime()).toBe(start + 5 * MINUTE);
        expect((await node.management.get(single.id))?.nextRetry?.getTime()).toBe(start + 3 * MINUTE);

        clock.advance(2 * MINUTE);
        await node.delivery.deliverDue();
        expect(delivered()).toEqual([now.id, at.id]);

        clock.advance(MINUTE);
        await node.delivery.deliverDue();
        expect(delivered()).toEqual([now.id, at.id, single.id]);

        clock.advance(2 * MINUTE);
        await node.delivery.deliverDue();
        expect(delivered()).toEqual([now.id, at.id, single.id, later.id]);
      });

      it('a deliverAt in the past, and delay 0, are due at once', async () => {
        node.probe.calls.length = 0;
        const past = await node.acceptor.accept({
          type,
          payload: {},
          deliverAt: new Date(clock.now - MINUTE),
        });
        const zero = await node.acceptor.accept({ type, payload: {}, delay: 0 });
        await node.delivery.deliverDue();
        expect(node.probe.calls.map((m) => m.id).sort()).toEqual([past.id, zero.id].sort());
      });

      it('retryNow delivers a scheduled message at once', async () => {
        node.probe.calls.length = 0;
        const { id } = await node.acceptor.accept({ type, payload: {}, delay: '1h' });
        await node.delivery.deliverDue();
        expect(node.probe.calls).toHaveLength(0);
        await node.management.retryNow(id);
        await node.delivery.deliverDue();
        expect(node.probe.calls.map((m) => m.id)).toEqual([id]);
      });
    });

    describe('on the database clock', () => {
      let node: InboxTestApp;
      beforeAll(async () => {
        node = await createInboxApp(ctx);
      });
      afterAll(() => node?.close());

      it('delay counts from INSERTED (the database clock), one row or many (acceptAll)', async () => {
        const [a, b] = await node.acceptor.acceptAll([
          { type, payload: {}, delay: '1h' },
          { type, payload: {}, delay: 'PT2H' },
          { type, payload: {} },
        ]);
        const one = await node.acceptor.accept({ type, payload: {}, delay: 90_000 });
        for (const [id, ms] of [
          [a.id, 3_600_000],
          [b.id, 7_200_000],
          [one.id, 90_000],
        ] as const) {
          const info = (await node.management.get(id))!;
          expect(info.nextRetry!.getTime() - info.inserted.getTime()).toBe(ms);
        }
        await node.delivery.deliverDue();
        expect(node.probe.calls.map((m) => m.id)).not.toEqual(expect.arrayContaining([a.id]));
        expect(node.probe.calls.map((m) => m.id)).not.toEqual(expect.arrayContaining([one.id]));
      });

      it('deliverAt in the caller’s transaction', async () => {
        const at = new Date(Date.now() + 3_600_000);
        const { id } = await ctx.dataSource.transaction((manager) =>
          node.acceptor.accept({ type, payload: {}, deliverAt: at }, { manager }),
        );
        expect((await node.management.get(id))?.nextRetry?.getTime()).toBe(at.getTime());
      });

      it.each<[string, Partial<AcceptMessage>, RegExp]>([
        ['deliverAt an invalid Date', { deliverAt: new Date('not a date') }, /'deliverAt'.*valid Date/],
        ['deliverAt a string', { deliverAt: '2027-01-01' as unknown as Date }, /'deliverAt'.*valid Date/],
        ['a negative delay', { delay: -1 }, /'delay' = -1: must be a duration of 0 or more/],
        ['an unreadable delay', { delay: 'soon' }, /'delay' = "soon"/],
        ['both deliverAt and delay', { deliverAt: new Date(), delay: '1m' }, /either 'deliverAt' or 'delay'/],
        [
          'deliverAt at the pause marker',
          { deliverAt: new Date('4999-12-03T10:15:30Z') },
          /latest NEXT_RETRY holds/,
        ],
        [
          'deliverAt after the expiration',
          { deliverAt: new Date(Date.now() + 2 * MINUTE), expiration: new Date(Date.now() + MINUTE) },
          /not before the message's expiration/,
        ],
        [
          'delay not shorter than the ttl',
          { delay: '10m', ttl: 'PT5M' },
          /not shorter than the message's ttl/,
        ],
      ])('refuses %s with InvalidMessageError, nothing stored', async (_what, fields, message) => {
        const before = await node.management.count();
        const error = await node.acceptor
          .acceptAll([
            { type, payload: {} },
            { type, payload: {}, ...fields },
          ])
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidMessageError);
        expect((error as InvalidMessageError).code).toBe('HOLDFAST_INBOX_INVALID_MESSAGE');
        expect((error as Error).message).toMatch(message);
        expect((error as InvalidMessageError).index).toBe(1);
        expect((await node.management.count()).total).toBe(before.total);
      });
    });

    const layouts: SeedLayout[] = ctx.db === 'mariadb' ? ['seed', 'seed-timestamp'] : ['seed'];
    it.each(layouts)("works on the seed's own COR_MESSAGE (%s), unchanged", async (layout) => {
      const prefix = `${ctx.prefix}${layout === 'seed' ? 'sd' : 'ts'}_`;
      for (const ddl of seedCorMessageDdl(ctx.db, prefix, layout)) await ctx.sql.execute(statement(ddl));
      const clock = new TestClock();
      let node: InboxTestApp | undefined;
      try {
        node = await createInboxApp({ ...ctx, prefix }, { clock: clock.read });
        const { id } = await node.acceptor.accept({ type, payload: {}, delay: '10m' });
        await node.delivery.deliverDue();
        expect(node.probe.calls).toHaveLength(0);
        clock.advance(10 * MINUTE);
        await node.delivery.deliverDue();
        expect(node.probe.calls.map((m) => m.id)).toEqual([id]);
        // A TIMESTAMP column ends in January 2038: a later time is refused, not wrapped or cut.
        const late = node.acceptor.accept({ type, payload: {}, deliverAt: new Date('2040-01-01T00:00:00Z') });
        if (layout === 'seed-timestamp')
          await expect(late).rejects.toThrow(/2038-01-19.*latest NEXT_RETRY holds/);
        else await expect(late).resolves.toMatchObject({ accepted: true });
      } finally {
        await node?.close();
        await ctx.sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}COR_MESSAGE`));
      }
    });
  },
  { tables: ['COR_MESSAGE', 'HOLDFAST_SIMBA_MUTEX'] },
);
