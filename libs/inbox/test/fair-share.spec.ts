import { Injectable, Module } from '@nestjs/common';
import { InvalidOptionsError, statement } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import { InboxFairShareError, InboxHandler, type InboxMessage } from '../src';
import { createInboxApp, type InboxTestApp } from './inbox-test-app';
import { seedCorMessageDdl } from './seed-ddl';

/** The hot type: TestHandlers' own (every call lands in the app's probe). */
const hot = { namespace: 'test', name: 'order-placed' };
const QUIET = ['quiet-a', 'quiet-b', 'quiet-c'];

/** What the quiet types' handler saw, per app (the module is imported by each app of a test). */
class QuietCalls {
  readonly ids: string[] = [];
}

@Injectable()
class QuietHandlers {
  constructor(private readonly calls: QuietCalls) {}
  @InboxHandler({ name: 'quiet-a' })
  a(m: InboxMessage): void {
    this.calls.ids.push(m.id);
  }
  @InboxHandler({ name: 'quiet-b' })
  b(m: InboxMessage): void {
    this.calls.ids.push(m.id);
  }
  @InboxHandler({ name: 'quiet-c' })
  c(m: InboxMessage): void {
    this.calls.ids.push(m.id);
  }
}

/**
 * Fair share (`fairShare: { perKey }`): a claim takes at most `perKey` messages of one type name,
 * every name's first due message before any name's second, so a type with a large backlog
 * accepted first does not hold back the types accepted after it.
 */
describeEachDatabase('inbox fair share', (ctx) => {
  const apps: InboxTestApp[] = [];
  const open = async (options: Parameters<typeof createInboxApp>[1] = {}) => {
    const calls = new QuietCalls();
    @Module({ providers: [{ provide: QuietCalls, useValue: calls }, QuietHandlers] })
    class QuietModule {}
    const app = await createInboxApp(
      { ...ctx, prefix: `${ctx.prefix}f_` },
      { fairShare: { perKey: 3 }, ...options },
      { imports: [{ module: QuietModule }] },
    );
    apps.push(app);
    return { ...app, quiet: calls.ids };
  };
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
    await ctx.sql.execute(statement(`DROP TABLE IF EXISTS ${ctx.prefix}f_COR_MESSAGE`));
  });

  /** `n` hot messages, then `each` of every quiet type, accepted in that order. */
  const backlog = async (app: InboxTestApp, n: number, each: number) => {
    await app.acceptor.acceptAll(
      Array.from({ length: n }, (_, i) => ({ id: `h${String(i).padStart(4, '0')}`, type: hot, payload: {} })),
    );
    for (const name of QUIET)
      await app.acceptor.acceptAll(
        Array.from({ length: each }, (_, i) => ({ id: `${name}-${i}`, type: { name }, payload: {} })),
      );
  };

  it('one claim takes every type, round by round, though the hot one was accepted first', async () => {
    const node = await open({ batchSize: 8 });
    await backlog(node, 40, 2);
    const report = await node.delivery.deliverDue();
    expect(report.claimed).toBe(8);
    // Round one: the first of each of the four types; round two: the second of each.
    expect([...node.quiet].sort()).toEqual(QUIET.flatMap((q) => [`${q}-0`, `${q}-1`]));
    expect(node.probe.calls.map((m) => m.id)).toEqual(['h0000', 'h0001']);
  });

  it('a claim takes the first round of every type before a second one of any', async () => {
    const node = await open({ batchSize: 5 });
    await backlog(node, 40, 3);
    await node.delivery.deliverDue();
    // Five of a round-robin over four types: each type's first, then the earliest second (hot's).
    expect([...node.quiet].sort()).toEqual(QUIET.map((q) => `${q}-0`));
    expect(node.probe.calls.map((m) => m.id)).toEqual(['h0000', 'h0001']);
  });

  it('at most perKey messages of one type per claim', async () => {
    const node = await open({ batchSize: 8 });
    await backlog(node, 40, 0);
    const first = await node.delivery.deliverDue();
    expect(first.claimed).toBe(3);
    expect(node.probe.calls.map((m) => m.id)).toEqual(['h0000', 'h0001', 'h0002']);
    for (let i = 0; i < 20; i++) await node.delivery.deliverDue();
    expect(node.probe.calls.map((m) => m.id)).toEqual(
      Array.from({ length: 40 }, (_, i) => `h${String(i).padStart(4, '0')}`),
    );
  });

  it('the loop drains one type alone at perKey a claim without waiting for the next poll', async () => {
    // pollInterval is an hour: a claim of perKey (under batchSize) must still count as full.
    const node = await open({ batchSize: 8, wakeOnAccept: true });
    await backlog(node, 30, 0);
    for (let i = 0; i < 400 && node.probe.calls.length < 30; i++) await new Promise((r) => setTimeout(r, 50));
    expect(node.probe.calls.length).toBe(30);
  });

  it('competing nodes claiming side by side deliver every message once, the quiet types early', async () => {
    const nodes =
      ctx.db === 'sqlite'
        ? [await open({ batchSize: 16, fairShare: { perKey: 4 } })]
        : [
            await open({ batchSize: 16, fairShare: { perKey: 4 } }),
            await open({ batchSize: 16, fairShare: { perKey: 4 } }),
          ];
    await backlog(nodes[0], 300, 20);
    // Each round, each node claims at most 4 hot messages: after 5 rounds every quiet one is
    // delivered and at most 40 hot ones.
    for (let round = 0; round < 5; round++) await Promise.all(nodes.map((n) => n.delivery.deliverDue()));
    const quiet = nodes.flatMap((n) => n.quiet);
    const hotIds = nodes.flatMap((n) => n.probe.calls.map((m) => m.id));
    expect(new Set(quiet).size).toBe(60);
    expect(quiet.length).toBe(60);
    expect(hotIds.length).toBeLessThanOrEqual(40);
    for (let round = 0; round < 200 && hotIds.length < 300; round++) {
      await Promise.all(nodes.map((n) => n.delivery.deliverDue()));
      hotIds.splice(0, hotIds.length, ...nodes.flatMap((n) => n.probe.calls.map((m) => m.id)));
    }
    expect(hotIds.length).toBe(300);
    expect(new Set(hotIds).size).toBe(300);
    expect(nodes.flatMap((n) => n.quiet).length).toBe(60);
  });

  it('a due message behind messages of its type that are leased or waiting is still reached', async () => {
    const node = await open({ batchSize: 4 });
    await backlog(node, 6, 1);
    // Hot's first three wait for a retry (a failure); the claim passes them in its type's range.
    node.probe.behaviour = (m) =>
      ['h0000', 'h0001', 'h0002'].includes(m.id) ? new Error('later') : undefined;
    await node.delivery.deliverDue();
    node.probe.behaviour = () => undefined;
    await node.delivery.deliverDue();
    const ids = node.probe.calls.map((m) => m.id);
    expect(ids.slice(0, 3)).toEqual(['h0000', 'h0001', 'h0002']);
    expect(ids).toContain('h0003');
    expect(node.quiet.length).toBe(3);
  });

  it("the seed's COR_MESSAGE: fair without the type index, and with the migration's DDL", async () => {
    for (const ddl of seedCorMessageDdl(ctx.db, `${ctx.prefix}f_`)) await ctx.sql.execute(statement(ddl));
    const node = await open({ batchSize: 4, schema: 'none' });
    await backlog(node, 12, 1);
    await node.delivery.deliverDue();
    expect([...node.quiet].sort()).toEqual(QUIET.map((q) => `${q}-0`));
    await node.close();
    apps.splice(0);
    const { addTypeIndexSql } = await import('../src/store/cor-message.fair-share');
    for (const ddl of addTypeIndexSql(ctx.sql.dialect, `${ctx.prefix}f_`))
      await ctx.sql.execute(statement(ddl));
    const again = await open({ batchSize: 4, schema: 'none' });
    await backlog(again, 0, 2);
    await again.delivery.deliverDue();
    // The hot type's next (h0001) and each quiet type's -0 and -1 (one of them behind: four a claim).
    expect(again.probe.calls.map((m) => m.id)).toEqual(['h0001']);
    expect(again.quiet.length).toBe(3);
  });

  it.each([
    ['groupBy', { groupBy: (m: InboxMessage) => m.id }],
    ['priorities', { priorities: true }],
  ])('refuses fairShare with %s at startup (InboxFairShareError)', async (option, options) => {
    const error = await open(options).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InboxFairShareError);
    expect((error as InboxFairShareError).code).toBe('HOLDFAST_INBOX_FAIR_SHARE');
    expect((error as Error).message).toContain(`'${option}'`);
  });

  it.each<[string, unknown]>([
    ['zero', { perKey: 0 }],
    ['a fraction', { perKey: 1.5 }],
    ['missing', {}],
    ['not an object', 3],
  ])('refuses a fairShare that is %s with InvalidOptionsError', async (_what, fairShare) => {
    const error = await open({ fairShare: fairShare as { perKey: number } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect((error as Error).message).toMatch(/fairShare/);
  });
});
