import { describeEachDatabase } from '@holdfast/testing';
import { InboxConnection } from '../src/store/inbox-connection';
import { createInboxApp } from './inbox-test-app';

const ORDER = { namespace: 'test', name: 'order-placed' };

/**
 * On a backlog the delivery's claims grow (fewer claims, so fewer round trips, per message), up to
 * 10 × batchSize, and are batchSize again once a claim comes back short. Sizes asked, no timing.
 */
describeEachDatabase(
  'InboxModule claim size on a backlog',
  (ctx) => {
    it('doubles the claim while claims come back full, up to 10 × batchSize, then starts again at batchSize', async () => {
      // No LISTEN/NOTIFY wake-ups: only the test's own runs claim.
      const node = await createInboxApp(ctx, {
        batchSize: 10,
        ...(ctx.db === 'postgres' ? { notify: false } : {}),
      });
      try {
        await node.delivery.deliverDue(); // after the loop's first (empty) poll
        const claims = jest.spyOn(node.app.get(InboxConnection).store.claims, 'claim');
        const asked = () => claims.mock.calls.map(([limit]) => limit);
        // 10 + 20 + 40 + 80 + 100 + 100 = 350 in full claims, then 15 in a short one, then an empty one.
        await node.acceptor.acceptAll(
          Array.from({ length: 365 }, (_, i) => ({ id: `g${i}`, type: ORDER, payload: i })),
        );
        while ((await node.delivery.deliverDue()).claimed > 0);
        expect(asked()).toEqual([10, 20, 40, 80, 100, 100, 100, 10]);
        expect(new Set(node.probe.calls.map((m) => m.id)).size).toBe(365);
        // A new backlog starts small again.
        await node.acceptor.acceptAll(
          Array.from({ length: 30 }, (_, i) => ({ id: `h${i}`, type: ORDER, payload: i })),
        );
        claims.mockClear();
        while ((await node.delivery.deliverDue()).claimed > 0);
        expect(asked()).toEqual([10, 20, 40]);
      } finally {
        await node.close();
      }
    });
  },
  { tables: ['COR_MESSAGE', 'simba_mutex'] },
);
