import { Injectable, Module } from '@nestjs/common';
import { statement, toNumber } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import {
  InboxHandler,
  InboxRateLimitError,
  RateTableMissingError,
  type InboxMessage,
  type InboxRateLimits,
} from '../src';
import { createInboxApp, TestClock, type InboxTestApp } from './inbox-test-app';

/** The limited type: TestHandlers' own (every call lands in the app's probe). */
const limited = { namespace: 'test', name: 'order-placed' };
const TABLES = ['COR_MESSAGE', 'HOLDFAST_INBOX_RATE', 'HOLDFAST_INBOX_PAUSE', 'HOLDFAST_INBOX_LEASE'];

/** What the other (unlimited) type's handler saw, per app. */
class OtherCalls {
  readonly ids: string[] = [];
}

@Injectable()
class OtherHandlers {
  constructor(private readonly calls: OtherCalls) {}
  @InboxHandler({ name: 'other' })
  other(m: InboxMessage): void {
    this.calls.ids.push(m.id);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Cluster-wide rate limits per message type name (`rateLimits`): every node's deliveries of a
 * limited type together stay within `limit` per `interval` window of the database clock; the
 * claimed messages beyond the window's permits go back, due at the next window, with their
 * RETRIES unchanged; other types are not held back.
 */
describeEachDatabase(
  'inbox rate limits',
  (ctx) => {
    const prefix = `${ctx.prefix}r_`;
    const apps: InboxTestApp[] = [];
    const open = async (options: Parameters<typeof createInboxApp>[1] = {}) => {
      const calls = new OtherCalls();
      @Module({ providers: [{ provide: OtherCalls, useValue: calls }, OtherHandlers] })
      class OtherModule {}
      const app = await createInboxApp({ ...ctx, prefix }, options, { imports: [{ module: OtherModule }] });
      apps.push(app);
      return { ...app, other: calls.ids };
    };
    afterEach(async () => {
      for (const app of apps.splice(0)) await app.close();
      for (const table of TABLES)
        await ctx.sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}${table}`)).catch(() => undefined);
    });

    const acceptLimited = (app: InboxTestApp, n: number) =>
      app.acceptor.acceptAll(
        Array.from({ length: n }, (_, i) => ({
          id: `l${String(i).padStart(3, '0')}`,
          type: limited,
          payload: {},
        })),
      );

    /** The permit rows of the limited type, oldest window first. */
    const windows = async () =>
      (
        await ctx.sql.query<{ start: unknown; permits: unknown }>(
          statement(
            `SELECT WINDOW_START AS start, PERMITS AS permits FROM ${prefix}HOLDFAST_INBOX_RATE ` +
              `WHERE RATE_KEY = 'order-placed' ORDER BY WINDOW_START`,
          ),
        )
      ).map((r) => ({ start: toNumber(r.start), permits: toNumber(r.permits) }));

    /** RETRIES and ERROR of every message still waiting. */
    const waiting = async () =>
      ctx.sql.query<{ id: string; retries: unknown; error: string | null }>(
        statement(
          `SELECT ID AS id, RETRIES AS retries, ERROR AS error FROM ${prefix}COR_MESSAGE ORDER BY ID`,
        ),
      );

    const oneNode = (
      clock: TestClock,
      limits: InboxRateLimits = { 'order-placed': { limit: 3, interval: '1s' } },
    ) => open({ batchSize: 8, clock: clock.read, rateLimits: limits });

    it('one node delivers at most limit per window, window after window, and gives back the rest', async () => {
      const clock = new TestClock(); // a whole second: the start of a window
      const node = await oneNode(clock);
      await acceptLimited(node, 10);
      for (const expected of [3, 6, 9, 10]) {
        // Claims again and again within the window: nothing more once its permits are taken.
        for (let i = 0; i < 3; i++) await node.delivery.deliverDue();
        expect(node.probe.calls.length).toBe(expected);
        clock.advance(1000);
      }
      expect((await windows()).map((w) => w.permits)).toEqual([3, 3, 3, 1]);
      expect((await windows()).map((w) => w.start - clock.now)).toEqual([-4000, -3000, -2000, -1000]);
      // Each message once, in acceptance order.
      expect(node.probe.calls.map((m) => m.id)).toEqual(
        Array.from({ length: 10 }, (_, i) => `l${String(i).padStart(3, '0')}`),
      );
    });

    it('gives back what is beyond the permits without counting an attempt, due at the next window', async () => {
      const clock = new TestClock();
      const node = await oneNode(clock);
      await acceptLimited(node, 8);
      // Messages that failed twice before: the release must not count a third attempt.
      await ctx.sql.execute(statement(`UPDATE ${prefix}COR_MESSAGE SET RETRIES = 2`));
      const report = await node.delivery.deliverDue();
      expect(report).toMatchObject({ delivered: 3, failed: 0, parked: 0 });
      const rest = await waiting();
      expect(rest.map((r) => r.id)).toEqual(['l003', 'l004', 'l005', 'l006', 'l007']);
      for (const row of rest) {
        expect(toNumber(row.retries)).toBe(2);
        expect(row.error).toBeNull();
      }
      const list = await node.management.list({ status: 'retrying' });
      expect(list.map((m) => [m.id, m.nextRetry?.getTime()])).toEqual(
        rest.map((r) => [r.id, clock.now + 1000]),
      );
      clock.advance(999);
      await node.delivery.deliverDue();
      expect(node.probe.calls.length).toBe(3);
      clock.advance(1);
      await node.delivery.deliverDue();
      expect(node.probe.calls.length).toBe(6);
    });

    it("deletes a type's windows older than 10 intervals as it opens a new one", async () => {
      const clock = new TestClock();
      const node = await oneNode(clock, { 'order-placed': { limit: 1, interval: '1s' } });
      await acceptLimited(node, 14);
      for (let i = 0; i < 14; i++) {
        await node.delivery.deliverDue();
        clock.advance(1000);
      }
      expect(node.probe.calls.length).toBe(14);
      const kept = await windows();
      const last = clock.now - 1000;
      expect(kept.map((w) => w.start)).toEqual(Array.from({ length: 11 }, (_, i) => last - (10 - i) * 1000));
    });

    it('delivers none of a limited type whose permits cannot be taken, and gives them back due at once', async () => {
      const clock = new TestClock();
      const node = await oneNode(clock);
      await ctx.sql.execute(statement(`DROP TABLE ${prefix}HOLDFAST_INBOX_RATE`));
      await acceptLimited(node, 3);
      await node.acceptor.acceptAll([
        { id: 'o000', type: { name: 'other' }, payload: {} },
        { id: 'o001', type: { name: 'other' }, payload: {} },
      ]);
      await node.delivery.deliverDue();
      expect(node.probe.calls.length).toBe(0);
      expect(node.other).toEqual(['o000', 'o001']);
      const rest = await waiting();
      expect(rest.map((r) => [r.id, toNumber(r.retries), r.error])).toEqual([
        ['l000', 0, null],
        ['l001', 0, null],
        ['l002', 0, null],
      ]);
      expect((await node.management.list({ status: 'due' })).map((m) => m.id)).toEqual([
        'l000',
        'l001',
        'l002',
      ]);
    });

    it('other types in the same claims are not slowed', async () => {
      const clock = new TestClock();
      const node = await oneNode(clock, { 'order-placed': { limit: 2, interval: '1m' } });
      await acceptLimited(node, 20);
      await node.acceptor.acceptAll(
        Array.from({ length: 12 }, (_, i) => ({
          id: `o${String(i).padStart(3, '0')}`,
          type: { name: 'other' },
          payload: {},
        })),
      );
      // Batches of 8: the first holds limited messages only; the ones beyond the permits go back
      // and the next claims reach the other type, all within the same window.
      for (let i = 0; i < 6; i++) await node.delivery.deliverDue();
      expect(node.probe.calls.length).toBe(2);
      expect(node.other.length).toBe(12);
      expect((await windows()).map((w) => w.permits)).toEqual([2]);
    });

    it('nodes on one database together stay within the limit of each window (database clock)', async () => {
      const limit = 4;
      const interval = 400;
      const options = { batchSize: 8, rateLimits: { 'order-placed': { limit, interval } } };
      // SQLite: one delivering node (leader mode) on the database clock.
      const nodes = ctx.db === 'sqlite' ? [await open(options)] : [await open(options), await open(options)];
      // Each delivery's time on the database clock (read in the handler, after its claim).
      const at: number[] = [];
      for (const node of nodes) node.probe.behaviour = async () => void at.push(await ctx.sql.nowMillis());
      const total = 20;
      await acceptLimited(nodes[0], total);
      const delivered = () => nodes.reduce((n, node) => n + node.probe.calls.length, 0);
      for (let round = 0; round < 2000 && delivered() < total; round++) {
        await Promise.all(nodes.map((node) => node.delivery.deliverDue()));
        await sleep(10);
      }
      const ids = nodes.flatMap((node) => node.probe.calls.map((m) => m.id));
      expect(ids.length).toBe(total);
      expect(new Set(ids).size).toBe(total);
      // The permits: never above the limit in a window, and one per delivery.
      const permits = await windows();
      for (const w of permits) expect(w.permits).toBeLessThanOrEqual(limit);
      expect(permits.reduce((n, w) => n + w.permits, 0)).toBe(total);
      // The deliveries by the database clock: a delivery's claim came before it, so by the end of
      // any window at most `limit` per window since the first permit's window were delivered.
      const first = permits[0].start;
      const sorted = [...at].sort((a, b) => a - b);
      sorted.forEach((t, i) => {
        const windowsSoFar = Math.floor((t - first) / interval) + 1;
        expect(i + 1).toBeLessThanOrEqual(limit * windowsSoFar);
      });
    });

    it('permits taken by many transactions at once never pass the limit of a window', async () => {
      // The table as a delivering node creates it; then 24 takes at once, each on a connection of
      // its own (the test pool), each wanting 3 of a limit of 10 in one window.
      const node = await oneNode(new TestClock());
      await node.close();
      apps.splice(0);
      const { InboxRateStatements } = await import('../src/store/inbox-rate.statements');
      const rates = new InboxRateStatements(ctx.sql, `${prefix}HOLDFAST_INBOX_RATE`);
      const now = Date.UTC(2026, 0, 1, 12);
      const request = { key: 'order-placed', want: 3, limit: 10, intervalMs: 60_000 };
      const grants = await Promise.all(Array.from({ length: 24 }, () => rates.take([request], now)));
      expect(grants.reduce((n, [g]) => n + g.granted, 0)).toBe(10);
      expect(await windows()).toEqual([{ start: now, permits: 10 }]);
    });

    it.each<[string, unknown, string]>([
      ['a limit of zero', { 'order-placed': { limit: 0, interval: '1s' } }, 'limit'],
      ['a fractional limit', { 'order-placed': { limit: 1.5, interval: '1s' } }, 'limit'],
      ['no interval', { 'order-placed': { limit: 5 } }, 'interval'],
      ['an interval that is no duration', { 'order-placed': { limit: 5, interval: 'soon' } }, 'interval'],
      ['an interval of zero', { 'order-placed': { limit: 5, interval: 0 } }, 'interval'],
      ['an entry that is no object', { 'order-placed': 5 }, '{ limit, interval }'],
    ])('refuses %s at startup (InboxRateLimitError)', async (_what, rateLimits, names) => {
      const error = await open({ rateLimits: rateLimits as InboxRateLimits }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InboxRateLimitError);
      expect((error as InboxRateLimitError).code).toBe('HOLDFAST_INBOX_RATE_LIMIT');
      expect((error as Error).message).toContain("'order-placed'");
      expect((error as Error).message).toContain(names);
    });

    it("stops startup without the permit table under schema 'check', naming the migration", async () => {
      const first = await open({});
      await first.close();
      apps.splice(0);
      const error = await open({
        schema: 'check',
        rateLimits: { 'order-placed': { limit: 5, interval: '1s' } },
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RateTableMissingError);
      expect((error as RateTableMissingError).code).toBe('HOLDFAST_INBOX_RATE_TABLE_MISSING');
      expect((error as Error).message).toContain(`${prefix}HOLDFAST_INBOX_RATE`);
      expect((error as Error).message).toContain('1764000000414-create-inbox-rate');
    });
  },
  { tables: TABLES.map((t) => `r_${t}`) },
);
