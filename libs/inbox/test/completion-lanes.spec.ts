/**
 * #46: a node delivering a backlog deletes on a connection of its own, beside its claims (on the
 * inbox's lane a delete and the next claim take turns). The lane is asked for by the first full
 * flush, within the connection budget, and closed when the backlog is gone. A refused lane leaves
 * the deletes on the inbox's lane. SQLite and `coordinationPool: false` have no lanes: their
 * deletes stay where they are.
 */
import { configureCoordinationPool } from '@holdfast/core';
import { ConnectionBudgetError, CoordinationPool, type SqlClient } from '@holdfast/core/kit';
import { createTestDataSource, describeEachDatabase, waitUntil } from '@holdfast/testing';
import { CompletionLanes } from '../src/delivery/completion-lanes';
import { CorMessageCompletion } from '../src/store/cor-message.completion';
import type { Lease } from '../src/store/cor-message.rows';
import { InboxConnection } from '../src/store/inbox-connection';
import { createInboxApp, type InboxTestApp } from './inbox-test-app';

const MESSAGES = 300;

/** The clients the completion deletes ran on, in order (every CorMessageCompletion, whatever its lane). */
function recordDeletes(): SqlClient[] {
  const clients: SqlClient[] = [];
  const original = CorMessageCompletion.prototype.deleteOwned;
  jest.spyOn(CorMessageCompletion.prototype, 'deleteOwned').mockImplementation(function (
    this: CorMessageCompletion,
    leases: readonly Lease[],
  ) {
    clients.push(this.sql);
    return original.call(this, leases);
  });
  return clients;
}

async function deliverAll(node: InboxTestApp): Promise<void> {
  await node.acceptor.acceptAll(
    Array.from({ length: MESSAGES }, (_, i) => ({
      type: { namespace: 'test', name: 'order-placed' },
      payload: { i },
    })),
  );
  // A handler that yields once: the claims' flushes are full (every slot's message delivered).
  node.probe.behaviour = () => new Promise((resolve) => setImmediate(resolve));
  while ((await node.delivery.deliverDue()).delivered > 0);
}

describeEachDatabase(
  'InboxModule deletes while delivering a backlog',
  (ctx) => {
    afterEach(() => jest.restoreAllMocks());

    const options = { batchSize: 10, concurrency: 10 } as const;

    it(
      ctx.db === 'sqlite'
        ? 'has no lane of its own on SQLite: every delete on the one connection'
        : 'deletes on a connection of its own once a full flush asked for it, beside the claims, and closes it when idle',
      async () => {
        const clients = recordDeletes();
        const node = await createInboxApp(ctx, options);
        try {
          const lane = node.app.get(CompletionLanes);
          lane.idleMs = 300;
          const inboxLane = node.app.get(InboxConnection).store.sql;
          await deliverAll(node);
          expect(node.probe.calls).toHaveLength(MESSAGES);
          expect(new Set(node.probe.calls.map((m) => m.id)).size).toBe(MESSAGES);
          expect(await node.management.count('due')).toBe(0);
          expect(await node.management.count('retrying')).toBe(0);
          const others = clients.filter((c) => c.dataSource !== inboxLane.dataSource);
          if (ctx.db === 'sqlite') {
            expect(others).toEqual([]);
            expect(lane.isOpen).toBe(false);
            return;
          }
          // The first full flush ran on the inbox's lane and asked for the lane; later ones ran on it.
          expect(clients[0].dataSource).toBe(inboxLane.dataSource);
          expect(others.length).toBeGreaterThan(0);
          const pool = CoordinationPool.of(others[0].dataSource)!;
          expect(pool.lane).toMatch(/^inbox-deletes:/);
          expect(pool.maxConnections).toBe(2); // a claim's two deletes side by side
          expect(pool.isOpen).toBe(true);
          // No full flush for idleMs: the lane closes, and its connection with it.
          await waitUntil(() => !lane.isOpen, {
            timeout: 10_000,
            message: 'the delete lane closes when idle',
          });
          await waitUntil(() => pool.isClosed && !pool.isOpen, {
            timeout: 10_000,
            message: 'its pool closed',
          });
          // A backlog again: a lane again.
          const before = clients.length;
          await deliverAll(node);
          expect(clients.slice(before).some((c) => c.dataSource !== inboxLane.dataSource)).toBe(true);
          expect(await node.management.count('due')).toBe(0);
        } finally {
          await node.close();
        }
      },
    );

    if (ctx.db !== 'sqlite') {
      it('closes the lane with the application', async () => {
        const clients = recordDeletes();
        const node = await createInboxApp(ctx, options);
        const inboxLane = node.app.get(InboxConnection).store.sql;
        try {
          await deliverAll(node);
        } finally {
          await node.close();
        }
        const lanes = clients.filter((c) => c.dataSource !== inboxLane.dataSource);
        expect(lanes.length).toBeGreaterThan(0);
        expect(CoordinationPool.of(lanes[0].dataSource)!.isOpen).toBe(false);
      });

      it('keeps the deletes on the inbox lane when the server has no room for the lane, asking again only later', async () => {
        const clients = recordDeletes();
        const node = await createInboxApp(ctx, options);
        try {
          const connection = node.app.get(InboxConnection);
          const open = jest
            .spyOn(connection, 'openDeleteLane')
            .mockRejectedValue(new ConnectionBudgetError([], 1, 'max_connections 12, 11 in use', 0, 0));
          await deliverAll(node);
          expect(node.probe.calls).toHaveLength(MESSAGES);
          expect(await node.management.count('due')).toBe(0);
          expect(clients.every((c) => c.dataSource === connection.store.sql.dataSource)).toBe(true);
          expect(open).toHaveBeenCalledTimes(1); // not again before DELETE_LANE_REFUSED_MS
          expect(node.app.get(CompletionLanes).isOpen).toBe(false);
        } finally {
          await node.close();
        }
      });

      it('has no lane with coordinationPool: false: every delete on the application pool', async () => {
        const clients = recordDeletes();
        const dataSource = await createTestDataSource(ctx.db);
        configureCoordinationPool(dataSource, false);
        const node = await createInboxApp({ ...ctx, dataSource }, options);
        try {
          await deliverAll(node);
          const sql = node.app.get(InboxConnection).store.sql;
          expect(clients.length).toBeGreaterThan(0);
          expect(clients.every((c) => c.dataSource === sql.dataSource)).toBe(true);
          expect(node.app.get(CompletionLanes).isOpen).toBe(false);
        } finally {
          await node.close();
          await dataSource.destroy();
        }
      });
    }
  },
  { tables: ['COR_MESSAGE', 'SIMBA_MUTEX'] },
);
