import { describeEachDatabase, waitUntil } from '@holdfast/testing';
import type { InboxMessage } from '../src';
import { createInboxApp, type InboxTestApp } from './inbox-test-app';

const type = { namespace: 'test', name: 'order-placed' };

/** Node B takes what node A left, long before the 60 s visibility timeout; every message once. */
async function expectTakenOverOnce(a: InboxTestApp, b: InboxTestApp, ids: Set<string>, byA: number) {
  await waitUntil(() => a.probe.calls.length + b.probe.calls.length >= ids.size, {
    timeout: 20_000,
    message: `the rest taken by node B long before the 60 s visibility timeout (A ${byA}, B ${b.probe.calls.length})`,
  });
  const handled = [...a.probe.calls, ...b.probe.calls].map((m) => m.id);
  expect(new Set(handled)).toEqual(ids);
  expect(handled).toHaveLength(ids.size); // each exactly once
}

describeEachDatabase(
  'InboxModule wake-up on accept, handler signal, drain on shutdown',
  (ctx) => {
    const apps: InboxTestApp[] = [];
    afterEach(async () => {
      await Promise.all(apps.splice(0).map((a) => a.close().catch(() => undefined)));
    });

    it('delivers a message accepted on this node at once, not at the next poll (pollInterval 30s)', async () => {
      const node = await createInboxApp(ctx, { pollInterval: '30s', wakeOnAccept: true });
      apps.push(node);
      const { id } = await node.acceptor.accept({ type, payload: { n: 1 } });
      await waitUntil(() => node.probe.calls.some((m) => m.id === id), {
        timeout: 10_000,
        message: 'delivery well before the 30 s poll',
      });
    });

    it("aborts a handler's signal when its visibility timeout passes", async () => {
      const node = await createInboxApp(ctx, { visibilityTimeout: '500ms' });
      apps.push(node);
      let reason: unknown;
      node.probe.behaviour = (_m, { signal }) =>
        new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => {
            reason = signal.reason;
            resolve();
          }),
        );
      const { id } = await node.acceptor.accept({ type, payload: { n: 1 } });
      await node.delivery.deliverDue();
      expect((reason as Error)?.name).toBe('VisibilityTimeoutError');
      // The aborted attempt leaves the message due again: not for the next test's nodes to find.
      await node.management.delete(id);
    });

    it('on close: stops starting messages, hands the unstarted ones back at once, another node takes them', async () => {
      const messages = 20;
      const groupBy = (m: InboxMessage) => String((m.payload as { g: number }).g);
      const slow = () => new Promise<void>((resolve) => setTimeout(resolve, 200));
      const a = await createInboxApp(ctx, {
        pollInterval: '100ms',
        batchSize: messages,
        visibilityTimeout: '60s',
        shutdownGrace: '5s',
        groupBy,
      });
      apps.push(a);
      a.probe.behaviour = slow;
      const ids = new Set(
        (
          await a.acceptor.acceptAll(
            Array.from({ length: messages }, (_, i) => ({ type, payload: { g: i % 2, i } })),
          )
        ).map((r) => r.id),
      );
      // Two groups of ten, each delivered one after the other by node A (one claim of all 20).
      await waitUntil(() => a.probe.calls.length >= 2, { timeout: 15_000, message: 'node A delivering' });
      const b = await createInboxApp(
        ctx,
        { pollInterval: '200ms', batchSize: messages, visibilityTimeout: '60s', groupBy },
        { waitForLeadership: false },
      );
      apps.push(b);
      const startedBeforeClose = a.probe.calls.length;
      await a.close();
      apps.splice(apps.indexOf(a), 1);
      const byA = a.probe.calls.length;
      // At most the two running handlers finished during the close; nothing new was started.
      expect(byA).toBeLessThanOrEqual(startedBeforeClose + 2);
      await expectTakenOverOnce(a, b, ids, byA);
      expect(b.probe.calls.length).toBeGreaterThan(0);
    }, 60_000);

    it('on close: hands back the batch claimed ahead (ungrouped, full batches) unstarted; another node takes it', async () => {
      const messages = 30;
      const slow = () => new Promise<void>((resolve) => setTimeout(resolve, 200));
      // Full batches of 5: while one runs, the next 5 are claimed ahead and wait for slots.
      const options = { pollInterval: '100ms', batchSize: 5, visibilityTimeout: '60s', shutdownGrace: '5s' };
      const a = await createInboxApp(ctx, options);
      apps.push(a);
      a.probe.behaviour = slow;
      const ids = new Set(
        (
          await a.acceptor.acceptAll(Array.from({ length: messages }, (_, i) => ({ type, payload: { i } })))
        ).map((r) => r.id),
      );
      await waitUntil(() => a.probe.calls.length >= 1, { timeout: 15_000, message: 'node A delivering' });
      const b = await createInboxApp(
        ctx,
        { ...options, pollInterval: '200ms' },
        { waitForLeadership: false },
      );
      apps.push(b);
      await a.close();
      apps.splice(apps.indexOf(a), 1);
      const byA = a.probe.calls.length;
      await expectTakenOverOnce(a, b, ids, byA);
    }, 60_000);
  },
  { tag: 'inbox_drain' },
);
