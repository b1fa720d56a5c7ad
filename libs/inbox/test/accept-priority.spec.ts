import { statement } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import { InboxPriorityColumnError, InvalidMessageError, type InboxMessage } from '../src';
import { createInboxApp, TestClock, type InboxTestApp } from './inbox-test-app';
import { seedCorMessageDdl } from './seed-ddl';

const type = { namespace: 'test', name: 'order-placed' };
const groupBy = (m: InboxMessage) => (m.payload as { g: string }).g;

/**
 * Priorities (`priorities: true`, the opt-in PRIORITY column): claims take lower priorities first,
 * then acceptance order; within a group acceptance order still rules.
 */
describeEachDatabase(
  'inbox priorities',
  (ctx) => {
    const apps: InboxTestApp[] = [];
    const open = async (options: Parameters<typeof createInboxApp>[1] = {}, prefix = `${ctx.prefix}p_`) => {
      const app = await createInboxApp({ ...ctx, prefix }, { priorities: true, ...options });
      apps.push(app);
      return app;
    };
    const drop = async (prefix: string) => {
      for (const table of ['COR_MESSAGE', 'HOLDFAST_INBOX_GROUP'])
        await ctx.sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}${table}`));
    };
    afterEach(async () => {
      for (const app of apps.splice(0)) await app.close();
      await drop(`${ctx.prefix}p_`);
    });

    it('a claim takes the lowest priority first, then acceptance order (one message a claim)', async () => {
      const { acceptor, delivery, probe } = await open({ batchSize: 1, clock: new TestClock().read });
      await acceptor.acceptAll([
        { id: 'a', type, payload: {}, priority: 5 },
        { id: 'b', type, payload: {} },
        { id: 'c', type, payload: {}, priority: -3 },
        { id: 'd', type, payload: {}, priority: 0 },
        { id: 'e', type, payload: {}, priority: 5 },
      ]);
      await acceptor.accept({ id: 'f', type, payload: {}, priority: -32768 });
      for (let i = 0; i < 8; i++) await delivery.deliverDue();
      expect(probe.calls.map((m) => m.id)).toEqual(['f', 'c', 'b', 'd', 'a', 'e']);
      expect(probe.calls.map((m) => m.priority)).toEqual([-32768, -3, 0, 0, 5, 5]);
    });

    it('a larger claim takes the best priorities and delivers them in that order', async () => {
      const { acceptor, delivery, probe } = await open({ batchSize: 3 });
      const messages = [4, 3, 2, 1, 0, -1].map((p) => ({ id: `m${p + 1}`, type, payload: {}, priority: p }));
      await acceptor.acceptAll(messages);
      await delivery.deliverDue();
      // One claim of several rows: the best priorities, started in their order.
      const first = probe.calls.map((m) => m.id);
      expect(first.length).toBeGreaterThan(1);
      expect(first).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5'].slice(0, first.length));
      for (let i = 0; i < 4; i++) await delivery.deliverDue();
      expect(probe.calls.map((m) => m.id)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5']);
    });

    it('grouped: priority orders the groups, acceptance order rules within a group', async () => {
      const clock = new TestClock();
      const { acceptor, delivery, probe } = await open({ groupBy, batchSize: 1, clock: clock.read });
      // a2 has the best priority but waits behind a1 (its group's earlier message).
      await acceptor.acceptAll([
        { id: 'a1', type, payload: { g: 'a' }, priority: 5 },
        { id: 'a2', type, payload: { g: 'a' }, priority: -10 },
        { id: 'b1', type, payload: { g: 'b' }, priority: 1 },
        { id: 'c1', type, payload: { g: 'c' }, priority: -1 },
      ]);
      for (let i = 0; i < 6; i++) await delivery.deliverDue();
      expect(probe.calls.map((m) => m.id)).toEqual(['c1', 'b1', 'a1', 'a2']);
    });

    it('grouped, larger claims: a group comes as a run in its order, the best priorities first', async () => {
      const { acceptor, delivery, probe } = await open({ groupBy, batchSize: 2, concurrency: 1 });
      await acceptor.acceptAll([
        { id: 'a1', type, payload: { g: 'a' }, priority: 3 },
        { id: 'a2', type, payload: { g: 'a' }, priority: -5 },
        { id: 'b1', type, payload: { g: 'b' }, priority: -4 },
        { id: 'b2', type, payload: { g: 'b' }, priority: 7 },
        { id: 'c1', type, payload: { g: 'c' } },
      ]);
      for (let i = 0; i < 6; i++) await delivery.deliverDue();
      const ids = probe.calls.map((m) => m.id);
      expect([...ids].sort()).toEqual(['a1', 'a2', 'b1', 'b2', 'c1']);
      expect(ids.indexOf('a1')).toBeLessThan(ids.indexOf('a2'));
      expect(ids.indexOf('b1')).toBeLessThan(ids.indexOf('b2'));
      // b1 (-4) and c1 (0) before a1 (3); a2 (-5) waits behind a1.
      expect(ids.slice(0, 2).sort()).toEqual(['b1', 'c1']);
    });

    it('competing nodes claiming side by side deliver every message once, best priorities first', async () => {
      const nodes =
        ctx.db === 'sqlite'
          ? [await open({ batchSize: 16 })]
          : [await open({ batchSize: 16 }), await open({ batchSize: 16 })];
      const messages = Array.from({ length: 300 }, (_, i) => ({
        id: `n${String(i).padStart(3, '0')}`,
        type,
        payload: {},
        priority: i % 5,
      }));
      await nodes[0].acceptor.acceptAll(messages);
      for (let round = 0; round < 40; round++) await Promise.all(nodes.map((n) => n.delivery.deliverDue()));
      const ids = nodes.flatMap((n) => n.probe.calls.map((m) => m.id));
      expect(ids.length).toBe(300);
      expect(new Set(ids).size).toBe(300);
      // Each node took its messages in (PRIORITY, INSERTED, ID) order.
      for (const node of nodes) {
        const seen = node.probe.calls.map((m) => [m.priority!, m.id] as const);
        const sorted = [...seen].sort((x, y) => x[0] - y[0] || (x[1] < y[1] ? -1 : 1));
        expect(seen).toEqual(sorted);
      }
    });

    it.each<[string, unknown, RegExp]>([
      ['a fraction', 1.5, /'priority' = 1.5: must be an integer from -32768 to 32767/],
      ['too high', 32768, /'priority' = 32768: must be an integer/],
      ['too low', -32769, /'priority' = -32769/],
      ['a string', '1', /'priority' = "1"/],
      ['NaN', NaN, /'priority'/],
    ])(
      'refuses a priority that is %s with InvalidMessageError, nothing stored',
      async (_what, priority, message) => {
        const { acceptor, management } = await open();
        const error = await acceptor
          .acceptAll([
            { type, payload: {}, priority: 1 },
            { type, payload: {}, priority: priority as number },
          ])
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidMessageError);
        expect((error as InvalidMessageError).code).toBe('HOLDFAST_INBOX_INVALID_MESSAGE');
        expect((error as Error).message).toMatch(message);
        expect((await management.count()).total).toBe(0);
      },
    );

    it('priorities off: a priority is refused, and claims keep acceptance order', async () => {
      const { acceptor, delivery, probe } = await open({ priorities: false, batchSize: 1 });
      await expect(acceptor.accept({ type, payload: {}, priority: 1 })).rejects.toThrow(
        /'priority' = 1: priorities are off in this inbox: set the option 'priorities: true'/,
      );
      await acceptor.acceptAll([
        { id: 'x1', type, payload: {} },
        { id: 'x2', type, payload: {} },
      ]);
      for (let i = 0; i < 3; i++) await delivery.deliverDue();
      expect(probe.calls.map((m) => m.id)).toEqual(['x1', 'x2']);
      expect(probe.calls[0].priority).toBeUndefined();
    });

    it("the seed's COR_MESSAGE (no PRIORITY column) stops startup with InboxPriorityColumnError; off it works", async () => {
      const prefix = `${ctx.prefix}ps_`;
      for (const ddl of seedCorMessageDdl(ctx.db, prefix)) await ctx.sql.execute(statement(ddl));
      try {
        const error = await createInboxApp({ ...ctx, prefix }, { priorities: true }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InboxPriorityColumnError);
        expect((error as InboxPriorityColumnError).code).toBe('HOLDFAST_INBOX_PRIORITY_COLUMN');
        expect((error as Error).message).toMatch(/has no PRIORITY column/);
        expect((error as Error).message).toMatch(/1764000000412-cor-message-priority/);
        expect((error as Error).message).toMatch(/ALTER TABLE \S*COR_MESSAGE ADD COLUMN PRIORITY/);
        // 'create' never changes a live table: the column is still missing.
        const columns = await ctx.sql.query(statement(`SELECT * FROM ${prefix}COR_MESSAGE WHERE 1 = 0`));
        expect(columns).toEqual([]);
        const node = await createInboxApp({ ...ctx, prefix }, {});
        apps.push(node);
        const { id } = await node.acceptor.accept({ type, payload: {} });
        await node.delivery.deliverDue();
        expect(node.probe.calls.map((m) => m.id)).toEqual([id]);
      } finally {
        for (const app of apps.splice(0)) await app.close();
        await drop(prefix);
      }
    });

    it("the migration's DDL gives the seed table the column; a row written without it sorts as 0", async () => {
      const prefix = `${ctx.prefix}pm_`;
      for (const ddl of seedCorMessageDdl(ctx.db, prefix)) await ctx.sql.execute(statement(ddl));
      try {
        const { addPriorityColumnSql } = await import('../src/store/cor-message.priority');
        for (const ddl of addPriorityColumnSql(ctx.sql.dialect, prefix))
          await ctx.sql.execute(statement(ddl));
        const { acceptor, delivery, probe } = await open({ batchSize: 1 }, prefix);
        await acceptor.accept({ id: 'late', type, payload: {}, priority: 1 });
        await acceptor.accept({ id: 'plain', type, payload: {} });
        await acceptor.accept({ id: 'urgent', type, payload: {}, priority: -1 });
        // A writer that knows only the seed's columns (a Java client): PRIORITY takes its DEFAULT 0
        // ('java' has plain's INSERTED and sorts before it by ID).
        await ctx.sql.execute(
          statement(
            `INSERT INTO ${prefix}COR_MESSAGE (ID, PAYLOAD_ENCODING, PAYLOAD_TYPE_NAMESPACE, PAYLOAD_TYPE_NAME, PAYLOAD, INSERTED, RETRIES) ` +
              `SELECT 'java', PAYLOAD_ENCODING, PAYLOAD_TYPE_NAMESPACE, PAYLOAD_TYPE_NAME, PAYLOAD, INSERTED, 0 FROM ${prefix}COR_MESSAGE WHERE ID = 'plain'`,
          ),
        );
        for (let i = 0; i < 5; i++) await delivery.deliverDue();
        expect(probe.calls.map((m) => m.id)).toEqual(['urgent', 'java', 'plain', 'late']);
      } finally {
        for (const app of apps.splice(0)) await app.close();
        await drop(prefix);
      }
    });
  },
  { tables: ['COR_MESSAGE', 'HOLDFAST_INBOX_GROUP', 'SIMBA_MUTEX', 'HOLDFAST_INBOX_LEASE'] },
);
