import { describeEachDatabase } from '@holdfast/testing';
import { deliverySettings } from '../src/delivery/delivery-settings';
import { LeaseGate } from '../src/delivery/lease-gate';
import { resolveInboxOptions } from '../src/options/inbox-options.schema';
import { CorMessageCompletion } from '../src/store/cor-message.completion';
import type { Lease } from '../src/store/cor-message.rows';
import { createInboxApp } from './inbox-test-app';

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A promise and the function that settles it. */
function latch(): { done: Promise<void>; open: () => void } {
  let open!: () => void;
  const done = new Promise<void>((resolve) => (open = resolve));
  return { done, open };
}

describe('LeaseGate: completion deletes side by side, a heartbeat alone', () => {
  it('runs deletes together, a heartbeat after those in flight, and later deletes after the heartbeat', async () => {
    const gate = new LeaseGate();
    const log: string[] = [];
    const first = latch();
    const second = latch();
    const beat = latch();
    const d1 = gate.shared(async () => {
      log.push('d1 start');
      await first.done;
      log.push('d1 end');
    });
    const d2 = gate.shared(async () => {
      log.push('d2 start');
      await second.done;
      log.push('d2 end');
    });
    await tick();
    expect(log).toEqual(['d1 start', 'd2 start']);
    const h = gate.exclusive(async () => {
      log.push('beat start');
      await beat.done;
      log.push('beat end');
    });
    const d3 = gate.shared(async () => void log.push('d3'));
    let idle = false;
    void gate.idle().then(() => (idle = true));
    await tick();
    expect(log).toEqual(['d1 start', 'd2 start']); // the heartbeat waits for both, d3 for it
    first.open();
    await d1;
    await tick();
    expect(log).toEqual(['d1 start', 'd2 start', 'd1 end']);
    second.open();
    await d2;
    await tick();
    expect(log).toEqual(['d1 start', 'd2 start', 'd1 end', 'd2 end', 'beat start']);
    expect(idle).toBe(false);
    beat.open();
    await Promise.all([h, d3]);
    expect(log).toEqual(['d1 start', 'd2 start', 'd1 end', 'd2 end', 'beat start', 'beat end', 'd3']);
    expect(idle).toBe(true);
  });

  it('lets the work of a failed heartbeat or delete go, and opens for what waits', async () => {
    const gate = new LeaseGate();
    await expect(gate.exclusive(() => Promise.reject(new Error('beat')))).rejects.toThrow('beat');
    await expect(gate.shared(() => Promise.reject(new Error('delete')))).rejects.toThrow('delete');
    await expect(gate.exclusive(async () => 'next')).resolves.toBe('next');
    await expect(gate.shared(async () => 'after')).resolves.toBe('after');
  });
});

describeEachDatabase(
  'InboxModule completion deletes',
  (ctx) => {
    it('deletes delivered messages with a second delete while the first waits for its answer (servers), in one delete per claim (SQLite)', async () => {
      // Four slots: a delete starts once two delivered messages wait (half the slots), so the other
      // two run meanwhile and make the next delete, which goes out beside the first. SQLite runs a
      // statement at a time and commits each: one delete of the whole claim.
      const oneWriter = ctx.db === 'sqlite';
      const node = await createInboxApp(ctx, {
        batchSize: 4,
        concurrency: 4,
        completionFlushInterval: '1h',
      });
      try {
        // Every completion's deletes, on the inbox's lane or the deletes' own (see CompletionLanes).
        const deleteOwned = CorMessageCompletion.prototype.deleteOwned;
        let inFlight = 0;
        let most = 0;
        const sizes: number[] = [];
        const second = latch();
        const spy = jest.spyOn(CorMessageCompletion.prototype, 'deleteOwned');
        spy.mockImplementation(async function (this: CorMessageCompletion, leases: readonly Lease[]) {
          inFlight++;
          most = Math.max(most, inFlight);
          sizes.push(leases.length);
          try {
            // The first delete's answer is late: it waits for a second delete (at most 5 s).
            if (most < 2 && !oneWriter) {
              let timer: NodeJS.Timeout | undefined;
              await Promise.race([
                second.done,
                new Promise((resolve) => (timer = setTimeout(resolve, 5_000))),
              ]);
              clearTimeout(timer);
            } else second.open();
            return await deleteOwned.call(this, leases);
          } finally {
            inFlight--;
          }
        });
        await node.acceptor.acceptAll(
          Array.from({ length: 4 }, (_, i) => ({
            type: { namespace: 'test', name: 'order-placed' },
            payload: { i },
          })),
        );
        const report = await node.delivery.deliverDue();
        expect(report.delivered).toBe(4);
        expect(most).toBe(oneWriter ? 1 : 2);
        expect(sizes).toEqual(oneWriter ? [4] : [2, 2]);
        expect(await node.management.count('due')).toBe(0);
        expect(await node.management.count('retrying')).toBe(0);
      } finally {
        jest.restoreAllMocks();
        await node.close();
      }
    });
  },
  { tables: ['COR_MESSAGE', 'SIMBA_MUTEX'] },
);

describe('delivery defaults', () => {
  // A largest claim's worth of handlers by default, and deletes of half of it.
  it.each([
    ['the defaults', {}, 1000, 500],
    ['a small batchSize', { batchSize: 10 }, 100, 50],
    // A delete never waits for more than half the slots, whatever completionBatchSize says.
    ['completionBatchSize above half the slots', { batchSize: 10, completionBatchSize: 500 }, 100, 50],
    ['concurrency set', { concurrency: 3 }, 3, 2],
    ['both set', { concurrency: 400, completionBatchSize: 100 }, 400, 100],
    // Claims stop growing at 10,000 rows (a statement's parameters), and the defaults with them.
    ['the largest batchSize', { batchSize: 10_000 }, 10_000, 5_000],
  ] as const)('%s', (_name, options, concurrency, flushAt) => {
    const settings = deliverySettings(resolveInboxOptions(options));
    expect(settings.concurrency).toBe(concurrency);
    expect(settings.flushAt).toBe(flushAt);
  });

  // SQLite: a whole claim per delete unless completionBatchSize says less (never above concurrency).
  it.each([
    ['the defaults', {}, 1000],
    ['completionBatchSize set', { completionBatchSize: 100 }, 100],
    ['concurrency below the claim', { concurrency: 300 }, 300],
  ] as const)('one writer: %s', (_name, options, flushAt) => {
    expect(deliverySettings(resolveInboxOptions(options)).flushAtOneWriter).toBe(flushAt);
  });
});
