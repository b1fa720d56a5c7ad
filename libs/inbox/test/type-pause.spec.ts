import { statement } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import { InvalidManagementArgumentError, PauseTableMissingError, type InboxMessage } from '../src';
import { createInboxApp } from './inbox-test-app';

describeEachDatabase(
  'MessageManagement.pauseType / resumeType / pausedTypes',
  (ctx) => {
    it('leaves a paused type in the table, delivers the others, and delivers it once resumed', async () => {
      const node = await createInboxApp(ctx);
      try {
        const { acceptor, management, delivery, probe } = node;
        await acceptor.acceptAll([
          { id: 'o1', type: { namespace: 'test', name: 'order-placed' }, payload: {} },
          { id: 'o2', type: { namespace: 'test', name: 'order-placed', revision: '2' }, payload: {} },
        ]);
        await acceptor.acceptAll([{ id: 'b1', type: { name: 'blob' }, payload: Buffer.from('x') }]);
        const paused = await management.pauseType('test:order-placed@2', {
          actor: 'alice',
          reason: 'v2 broken',
        });
        expect(paused).toMatchObject({ type: 'test:order-placed@2', pausedBy: 'alice', reason: 'v2 broken' });
        expect(paused.pausedAt).toBeInstanceOf(Date);
        // That revision only: the message without a revision (NULL in the table) still goes.
        await delivery.deliverDue();
        expect(probe.calls.map((m) => m.id).sort()).toEqual(['b1', 'o1']);
        expect(await management.count('due')).toBe(1);

        await management.pauseType({ namespace: 'test', name: 'order-placed' }, { actor: 'bob' });
        await acceptor.acceptAll([
          { id: 'o3', type: { namespace: 'test', name: 'order-placed' }, payload: {} },
        ]);
        await delivery.deliverDue();
        expect(probe.calls).toHaveLength(2);
        expect((await management.pausedTypes()).map((p) => [p.type, p.pausedBy])).toEqual([
          ['test:order-placed', 'bob'],
          ['test:order-placed@2', 'alice'],
        ]);

        expect(await management.resumeType('test:order-placed', { actor: 'bob' })).toBe(true);
        expect(await management.resumeType('test:order-placed', { actor: 'bob' })).toBe(false);
        await delivery.deliverDue();
        expect(probe.calls.map((m) => m.id).sort()).toEqual(['b1', 'o1', 'o3']);
        expect(await management.resumeType('test:order-placed@2')).toBe(true);
        await delivery.deliverDue();
        expect(probe.calls.map((m) => m.id).sort()).toEqual(['b1', 'o1', 'o2', 'o3']);
        expect(await management.pausedTypes()).toEqual([]);
      } finally {
        await node.close();
      }
    });

    it('with groupBy, a paused message holds back the later messages of its group, whatever their type', async () => {
      const groupBy = (m: InboxMessage) => (m.payload as { g: string }).g;
      const node = await createInboxApp(ctx, { groupBy });
      try {
        const { acceptor, management, delivery, probe } = node;
        await management.pauseType('test:order-placed');
        await acceptor.acceptAll([
          { id: 'x1', type: { namespace: 'test', name: 'order-placed' }, payload: { g: 'x' } },
          { id: 'x2', type: { name: 'blob' }, payload: { g: 'x' } },
          { id: 'y1', type: { name: 'blob' }, payload: { g: 'y' } },
        ]);
        await delivery.deliverDue();
        // x2 waits behind the paused x1 of its group; group y goes.
        expect(probe.calls.map((m) => m.id)).toEqual(['y1']);
        await management.resumeType('test:order-placed');
        await delivery.deliverDue();
        expect(probe.calls.map((m) => m.id)).toEqual(['y1', 'x1', 'x2']);
      } finally {
        await node.close();
      }
    });

    it('refuses what names no type, a bad actor or reason, with a typed error naming it', async () => {
      const node = await createInboxApp(ctx);
      try {
        const { management } = node;
        const refused = async (call: () => Promise<unknown>, argument: string) => {
          const error = await call().catch((e: unknown) => e);
          expect(error).toBeInstanceOf(InvalidManagementArgumentError);
          expect(error).toMatchObject({ code: 'HOLDFAST_INBOX_INVALID_ARGUMENT', argument });
        };
        await refused(() => management.pauseType(''), 'type');
        await refused(() => management.pauseType('shop:'), 'type');
        await refused(() => management.pauseType({ name: 5 } as never), 'type');
        await refused(() => management.pauseType('x'.repeat(513)), 'type');
        await refused(() => management.pauseType('shop:order', { actor: '' }), 'actor');
        await refused(() => management.pauseType('shop:order', { reason: 7 as never }), 'reason');
        await refused(() => management.resumeType(':'), 'type');
        expect(await management.pausedTypes()).toEqual([]);
      } finally {
        await node.close();
      }
    });

    it('without the pause table (schema check, migration not run) starts, delivers, and says what is missing', async () => {
      await ctx.sql.execute(statement(`DROP TABLE IF EXISTS ${ctx.prefix}HOLDFAST_INBOX_PAUSE`));
      const node = await createInboxApp(ctx, { schema: 'check' });
      try {
        await node.acceptor.acceptAll([
          { id: 'c1', type: { namespace: 'test', name: 'order-placed' }, payload: {} },
        ]);
        await node.delivery.deliverDue();
        expect(node.probe.calls.map((m) => m.id)).toEqual(['c1']);
        expect(await node.management.pausedTypes()).toEqual([]);
        const error = await node.management.pauseType('test:order-placed').catch((e: unknown) => e);
        expect(error).toBeInstanceOf(PauseTableMissingError);
        expect((error as Error).message).toContain(`${ctx.prefix}HOLDFAST_INBOX_PAUSE does not exist`);
      } finally {
        await node.close();
      }
    });
  },
  { tables: ['COR_MESSAGE', 'HOLDFAST_INBOX_LEASE', 'HOLDFAST_INBOX_PAUSE', 'SIMBA_MUTEX'] },
);
