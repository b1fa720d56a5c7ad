import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { createTestDataSource, describeEachDatabase, TcpProxy, waitUntil } from '@holdfast/testing';
import {
  InboxClusterModeError,
  InboxHandler,
  InboxHealthIndicator,
  InboxModule,
  MessageAcceptor,
  ResolvedInboxOptions,
  type InboxMessage,
  type InboxModuleOptions,
} from '../src';
import { INBOX_OPTIONS } from '../src/internal';
import { createInboxApp, type InboxTestApp } from './inbox-test-app';
import { statement } from '@holdfast/core/kit';

const ORDER = { namespace: 'test', name: 'order-placed' };
const TYPE = { namespace: 'test', name: 'outage' };

@Injectable()
class Recorder {
  readonly ids = new Set<string>();
  @InboxHandler(TYPE)
  async handle(message: InboxMessage): Promise<void> {
    this.ids.add(message.id);
  }
}

describeEachDatabase(
  'InboxModule cluster modes and module wiring',
  (ctx) => {
    const apps: InboxTestApp[] = [];
    const open = async (options: Partial<InboxModuleOptions> = {}, waitForLeadership = true) => {
      const app = await createInboxApp(ctx, options, { waitForLeadership });
      apps.push(app);
      return app;
    };
    const table = () => `${ctx.prefix}COR_MESSAGE`;
    const rowCount = async () =>
      Number((await ctx.sql.query<{ c: unknown }>(statement(`SELECT COUNT(*) AS c FROM ${table()}`)))[0].c);

    afterEach(async () => {
      for (const app of apps.splice(0)) await app.close();
      await ctx.sql.execute(statement(`DELETE FROM ${table()}`));
    });

    if (ctx.db !== 'sqlite') {
      it('competing: two nodes claim disjoint rows and deliver each message once', async () => {
        const a = await open({ batchSize: 7, cluster: 'competing' });
        const b = await open({ batchSize: 7, cluster: 'competing' });
        // Slow handlers keep the claims overlapping in time.
        for (const node of [a, b]) node.probe.behaviour = () => new Promise((r) => setTimeout(r, 5));
        await a.acceptor.acceptAll(
          Array.from({ length: 140 }, (_, i) => ({ id: `c${i}`, type: ORDER, payload: i })),
        );
        const drain = async (node: InboxTestApp) => {
          while ((await node.delivery.deliverDue()).claimed > 0);
        };
        await Promise.all([drain(a), drain(b), drain(a), drain(b)]);
        const ids = [...a.probe.calls, ...b.probe.calls].map((m) => m.id);
        expect(ids).toHaveLength(140);
        expect(new Set(ids).size).toBe(140);
        expect(a.probe.calls.length).toBeGreaterThan(0);
        expect(b.probe.calls.length).toBeGreaterThan(0);
        expect(await rowCount()).toBe(0);
      });

      it('keeps its delivery loop alive while the connection is cut and catches up afterwards', async () => {
        const proxy = new TcpProxy(ctx.db === 'postgres' ? 5432 : 3306);
        const port = await proxy.start();
        const cutSource = await createTestDataSource(ctx.db, { port, poolSize: 2 });
        const node = await Test.createTestingModule({
          imports: [
            InboxModule.forRoot({
              dataSource: cutSource,
              tablePrefix: ctx.prefix,
              schema: 'create',
              pollInterval: '100ms',
            }),
          ],
          providers: [Recorder],
        })
          .compile()
          .then((m) => m.init());
        const writer = await Test.createTestingModule({
          imports: [
            InboxModule.forRoot({ dataSource: ctx.dataSource, tablePrefix: ctx.prefix, deliver: false }),
          ],
        })
          .compile()
          .then((m) => m.init());
        try {
          const recorder = node.get(Recorder);
          const accept = (n: number, tag: string) =>
            writer
              .get(MessageAcceptor)
              .acceptAll(Array.from({ length: n }, (_, i) => ({ id: `${tag}${i}`, type: TYPE, payload: i })));
          await accept(5, 'before');
          await waitUntil(() => recorder.ids.size === 5, { timeout: 10_000, message: '5 deliveries' });

          proxy.cut();
          await accept(5, 'during');
          await new Promise((r) => setTimeout(r, 1_000)); // several failed polls
          expect(recorder.ids.size).toBe(5);

          proxy.restore();
          await waitUntil(() => recorder.ids.size === 10, { timeout: 20_000, message: '10 deliveries' });
        } finally {
          await writer.close();
          await node.close().catch(() => undefined);
          await cutSource.destroy().catch(() => undefined);
          await proxy.stop();
        }
      }, 40_000);
    } else {
      it('refuses competing mode on SQLite', async () => {
        const error = await createInboxApp(ctx, { cluster: 'competing' }).catch((e: Error) => e);
        expect(error).toBeInstanceOf(InboxClusterModeError);
        expect((error as Error).message).toContain('SKIP LOCKED');
      });
    }

    it('leader: only the Simba mutex owner delivers; another node takes over when it leaves', async () => {
      const a = await open({ cluster: 'leader' });
      expect(a.delivery.isDelivering()).toBe(true);
      const standby = await open({ cluster: 'leader' }, false);
      expect(standby.delivery.isDelivering()).toBe(false);
      await a.acceptor.accept({ id: 'l1', type: ORDER, payload: {} });
      expect((await standby.delivery.deliverDue()).claimed).toBe(0);
      expect(await rowCount()).toBe(1);

      await a.close();
      apps.splice(apps.indexOf(a), 1);
      for (let i = 0; i < 200 && !standby.delivery.isDelivering(); i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(standby.delivery.isDelivering()).toBe(true);
      expect(await standby.delivery.deliverDue()).toMatchObject({ claimed: 1, delivered: 1 });
      expect(standby.probe.calls.map((m) => m.id)).toEqual(['l1']);
    }, 30_000);

    it('reports health with the counts per status', async () => {
      const node = await open();
      await node.acceptor.accept({ type: ORDER, payload: {} });
      const health = await node.app.get(InboxHealthIndicator).isHealthy('inbox');
      expect(health.inbox).toMatchObject({ status: 'up', delivering: true, due: 1, total: 1 });
    });

    @Injectable()
    class OptionsFactory {
      create(): InboxModuleOptions {
        return {
          dataSource: ctx.dataSource,
          tablePrefix: ctx.prefix,
          schema: 'create',
          deliver: false,
          batchSize: 42,
        };
      }
    }
    @Module({ providers: [OptionsFactory], exports: [OptionsFactory] })
    class OptionsModule {}

    it.each([
      [
        'useFactory',
        () =>
          InboxModule.forRootAsync({
            imports: [OptionsModule],
            useFactory: (f: OptionsFactory) => f.create(),
            inject: [OptionsFactory],
          }),
      ],
      [
        'useClass',
        () =>
          InboxModule.forRootAsync({
            useClass: class {
              create() {
                return {
                  dataSource: ctx.dataSource,
                  tablePrefix: ctx.prefix,
                  schema: 'create' as const,
                  deliver: false,
                  batchSize: 42,
                };
              }
            } as never,
          }),
      ],
      [
        'useExisting',
        () => InboxModule.forRootAsync({ imports: [OptionsModule], useExisting: OptionsFactory }),
      ],
      ['sync forRoot', () => InboxModule.forRoot(new OptionsFactory().create())],
    ])('forRoot/forRootAsync via %s resolves and validates the same options', async (_name, build) => {
      const moduleRef = await Test.createTestingModule({ imports: [build()] }).compile();
      const app = await moduleRef.init();
      try {
        const options = app.get<ResolvedInboxOptions>(INBOX_OPTIONS);
        expect(options.batchSize).toBe(42);
        expect(options.retry.maxRetries).toBe(5);
        expect((await app.get(MessageAcceptor).accept({ type: ORDER, payload: 1 })).accepted).toBe(true);
      } finally {
        await app.close();
      }
    });
  },
  { tables: ['COR_MESSAGE', 'SIMBA_MUTEX', 'HOLDFAST_INBOX_LEASE'] },
);
