import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { InvalidOptionsError, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  describeEachDatabase,
  TcpProxy,
  waitUntil,
  type TestDatabaseContext,
} from '@holdfast/testing';
import { SimbaModule } from '@holdfast/simba';
import {
  InboxClaimLostError,
  InboxDelivery,
  InboxHandler,
  InboxModule,
  InvalidInboxHandlerError,
  MessageAcceptor,
  type InboxHandlerContext,
  type InboxModuleOptions,
} from '../src';
import { createInboxApp } from './inbox-test-app';

/** Handlers that block until the test lets them go, counting how many run at once. */
class Gate {
  readonly running = new Map<string, number>();
  readonly max = new Map<string, number>();
  private waiting: (() => void)[] = [];
  handled = 0;
  total(): number {
    return [...this.running.values()].reduce((a, b) => a + b, 0);
  }
  maxTotal = 0;
  async enter(kind: string): Promise<void> {
    this.running.set(kind, (this.running.get(kind) ?? 0) + 1);
    this.max.set(kind, Math.max(this.max.get(kind) ?? 0, this.running.get(kind)!));
    this.maxTotal = Math.max(this.maxTotal, this.total());
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running.set(kind, this.running.get(kind)! - 1);
    this.handled++;
  }
  /** Lets every handler waiting now finish. */
  releaseAll(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}

@Injectable()
class GatedHandlers {
  constructor(private readonly gate: Gate) {}

  @InboxHandler({ namespace: 'ctl', name: 'open' })
  open(): Promise<void> {
    return this.gate.enter('open');
  }

  @InboxHandler({ namespace: 'ctl', name: 'limited', concurrency: 2 })
  limited(): Promise<void> {
    return this.gate.enter('limited');
  }
}

async function gatedNode(ctx: TestDatabaseContext, options: Partial<InboxModuleOptions>) {
  const gate = new Gate();
  const leader = ctx.db === 'sqlite';
  const app = await (
    await Test.createTestingModule({
      imports: [
        InboxModule.forRoot({
          dataSource: ctx.dataSource,
          tablePrefix: ctx.prefix,
          schema: 'create',
          pollInterval: '100ms',
          cleanupInterval: '1h',
          ...options,
        }),
        ...(leader
          ? [
              SimbaModule.forRoot({
                dataSource: ctx.dataSource,
                tablePrefix: ctx.prefix,
                schema: 'create',
                ttl: '10s',
                transition: '6s',
              }),
            ]
          : []),
      ],
      providers: [{ provide: Gate, useValue: gate }, GatedHandlers],
    }).compile()
  ).init();
  return { app, gate, acceptor: app.get(MessageAcceptor), delivery: app.get(InboxDelivery) };
}

/** Lets the handlers go, batch after batch, until `n` were handled; returns nothing. */
async function drain(gate: Gate, n: number): Promise<void> {
  await waitUntil(
    () => {
      gate.releaseAll();
      return gate.handled >= n;
    },
    { timeout: 30_000, interval: 100, message: `${n} messages handled` },
  );
}

describeEachDatabase(
  'InboxModule concurrency controls and heartbeats',
  (ctx) => {
    it('runs at most `concurrency` handlers at once on a node, across groups', async () => {
      const node = await gatedNode(ctx, { concurrency: 3, batchSize: 20 });
      try {
        await node.acceptor.acceptAll(
          Array.from({ length: 12 }, (_, i) => ({
            type: { namespace: 'ctl', name: 'open' },
            payload: { i },
          })),
        );
        await waitUntil(() => node.gate.total() === 3, { timeout: 15_000, message: '3 handlers running' });
        // Twelve messages claimed in one batch, twelve groups: still only three start.
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(node.gate.total()).toBe(3);
        await drain(node.gate, 12);
        expect(node.gate.maxTotal).toBe(3);
      } finally {
        node.gate.releaseAll();
        await node.app.close();
      }
    });

    it("runs at most a handler's own `concurrency` calls at once, without holding back other types", async () => {
      const node = await gatedNode(ctx, { batchSize: 20 });
      try {
        await node.acceptor.acceptAll([
          ...Array.from({ length: 8 }, (_, i) => ({
            type: { namespace: 'ctl', name: 'limited' },
            payload: { i },
          })),
          ...Array.from({ length: 4 }, (_, i) => ({
            type: { namespace: 'ctl', name: 'open' },
            payload: { i },
          })),
        ]);
        await waitUntil(() => node.gate.running.get('limited') === 2 && node.gate.running.get('open') === 4, {
          timeout: 15_000,
          message: '2 limited and 4 open handlers running',
        });
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(node.gate.running.get('limited')).toBe(2);
        await drain(node.gate, 12);
        expect(node.gate.max.get('limited')).toBe(2);
        expect(node.gate.max.get('open')).toBe(4);
      } finally {
        node.gate.releaseAll();
        await node.app.close();
      }
    });

    it('refuses bad concurrency and completion options with a typed error', async () => {
      for (const [options, text] of [
        [{ concurrency: 0 }, "option 'concurrency' = 0"],
        [{ concurrency: 2.5 }, "option 'concurrency' = 2.5"],
        [{ concurrency: 'many' }, 'option \'concurrency\' = "many"'],
        [{ completionBatchSize: 0 }, "option 'completionBatchSize' = 0"],
        [{ completionFlushInterval: 'soon' }, 'option \'completionFlushInterval\' = "soon"'],
        [{ handlerTimeout: -1 }, "option 'handlerTimeout' = -1"],
      ] as const) {
        const error = await createInboxApp(ctx, options as never).catch((e: Error) => e);
        expect(error).toBeInstanceOf(InvalidOptionsError);
        expect((error as InvalidOptionsError).code).toBe('HOLDFAST_CORE_INVALID_OPTIONS');
        expect((error as Error).message).toContain(text);
      }
    });

    it('refuses a bad statementTimeout with a typed error', async () => {
      for (const [options, text] of [
        [{ statementTimeout: 'soon' }, 'option \'statementTimeout\' = "soon"'],
        [{ statementTimeout: -1 }, "option 'statementTimeout' = -1"],
      ] as const) {
        const error = await createInboxApp(ctx, options as never).catch((e: Error) => e);
        expect(error).toBeInstanceOf(InvalidOptionsError);
        expect((error as InvalidOptionsError).code).toBe('HOLDFAST_CORE_INVALID_OPTIONS');
        expect((error as Error).message).toContain(text);
      }
    });

    it("aborts the handler's signal when a heartbeat finds its row changed, and records nothing", async () => {
      const node = await createInboxApp(ctx, { visibilityTimeout: '900ms', handlerTimeout: 0 });
      let reason: unknown;
      node.probe.behaviour = (_m, { signal }: InboxHandlerContext) =>
        new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => {
            reason = signal.reason;
            resolve();
          }),
        );
      try {
        const { id } = await node.acceptor.accept({
          type: { namespace: 'test', name: 'order-placed' },
          payload: {},
        });
        const run = node.delivery.deliverDue();
        await waitUntil(() => node.probe.calls.length === 1, {
          timeout: 15_000,
          message: 'the handler running',
        });
        // An admin makes it due again while it runs: the row is no longer this node's claim.
        await node.management.retryNow(id);
        const report = await run;
        expect(reason).toBeInstanceOf(InboxClaimLostError);
        expect((reason as Error).message).toContain('changed');
        expect(report).toMatchObject({ claimed: 1, delivered: 0, failed: 0 });
        // Not deleted, no attempt counted: it is due for whoever claims it next.
        expect(await node.management.get(id)).toMatchObject({ retries: 0 });
        await node.management.delete(id);
      } finally {
        await node.close();
      }
    });

    if (ctx.db !== 'sqlite') {
      it("aborts the handler's signal when the node is cut off from the database, and records nothing", async () => {
        const proxy = new TcpProxy(ctx.db === 'postgres' ? 5432 : 3306);
        const port = await proxy.start();
        const cutSource = await createTestDataSource(ctx.db, { port, poolSize: 3 });
        const node = await createInboxApp(
          { ...ctx, dataSource: cutSource },
          { pollInterval: '100ms', visibilityTimeout: '1500ms', handlerTimeout: 0, shutdownGrace: '1s' },
        );
        let reason: unknown;
        try {
          node.probe.behaviour = (_m, { signal }: InboxHandlerContext) =>
            new Promise<void>((resolve) =>
              signal.addEventListener('abort', () => {
                reason = signal.reason;
                resolve();
              }),
            );
          const { id } = await node.acceptor.accept({
            type: { namespace: 'test', name: 'order-placed' },
            payload: {},
          });
          await waitUntil(() => node.probe.calls.length === 1, {
            timeout: 15_000,
            message: 'the handler running',
          });
          proxy.blackhole();
          await waitUntil(() => reason !== undefined, { timeout: 30_000, message: 'the signal aborted' });
          expect(reason).toBeInstanceOf(InboxClaimLostError);
          expect((reason as InboxClaimLostError).code).toBe('HOLDFAST_INBOX_CLAIM_LOST');
          expect((reason as Error).message).toContain(id);
          // Its outcome is not recorded: the row is as the claim left it, no attempt counted.
          const rows = await ctx.sql.query<{ id: string; retries: unknown }>(
            statement(`SELECT ID AS id, RETRIES AS retries FROM ${ctx.prefix}COR_MESSAGE`),
          );
          const row = rows.find((r) => r.id === id);
          expect(Number(row?.retries)).toBe(0);
          await ctx.sql.execute(statement(`DELETE FROM ${ctx.prefix}COR_MESSAGE`));
        } finally {
          proxy.cut();
          await node.close().catch(() => undefined);
          await cutSource.destroy().catch(() => undefined);
          await proxy.stop();
        }
      });
    }
  },
  { tables: ['COR_MESSAGE', 'SIMBA_MUTEX'] },
);

describe('@InboxHandler options', () => {
  it.each([0, -1, 1.5, '2', Number.NaN])('refuses concurrency %p with a typed error', (concurrency) => {
    let error: unknown;
    try {
      InboxHandler({ name: 'x', concurrency: concurrency as number });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidInboxHandlerError);
    expect((error as InvalidInboxHandlerError).code).toBe('HOLDFAST_INBOX_INVALID_HANDLER');
  });
});
