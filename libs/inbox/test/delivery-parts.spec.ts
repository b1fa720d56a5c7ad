import { Inject, Injectable, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { describeEachDatabase, waitUntil } from '@holdfast/testing';
import { SimbaModule } from '@holdfast/simba';
import {
  getInboxToken,
  InboxDelivery,
  InboxHandler,
  InboxModule,
  MessageAcceptor,
  type InboxMessage,
} from '../src';
import { RateLimiter } from '../src/delivery/rate-limiter';
import type { MessageRow } from '../src/store/cor-message.rows';
import { InboxConnection } from '../src/store/inbox-connection';

/**
 * The parts of the delivery are the module's providers (issue #44, item 4): a test replaces one
 * with overrideProvider, and each inbox of an application (a named one beside the default) has
 * its own.
 */

const TYPE = { namespace: 'parts', name: 'note' };
const delivered: string[] = [];

@Injectable()
class Handlers {
  @InboxHandler(TYPE)
  async main(message: InboxMessage): Promise<void> {
    delivered.push(`main:${message.id}`);
  }

  @InboxHandler({ ...TYPE, inbox: 'audit' })
  async audit(message: InboxMessage): Promise<void> {
    delivered.push(`audit:${message.id}`);
  }
}

/** Each inbox's services, as the app's own modules get them (a test's moduleRef.get(Class) may find either inbox's). */
@Injectable()
class Consumer {
  constructor(
    readonly main: InboxDelivery,
    @Inject(getInboxToken(InboxDelivery, 'audit')) readonly audit: InboxDelivery,
    readonly acceptor: MessageAcceptor,
    @Inject(getInboxToken(MessageAcceptor, 'audit')) readonly auditAcceptor: MessageAcceptor,
  ) {}
}

@Module({ providers: [Consumer, Handlers] })
class FeatureModule {}

/** A RateLimiter that admits every row and notes, per inbox table, the ids it saw. */
class SeeingRateLimiter {
  static readonly seen: string[] = [];
  constructor(private readonly connection: InboxConnection) {}
  async admit(rows: MessageRow[]): Promise<MessageRow[]> {
    for (const row of rows) SeeingRateLimiter.seen.push(`${this.connection.store.table}:${row.id}`);
    return rows;
  }
}

describeEachDatabase(
  'the delivery parts are providers',
  (ctx) => {
    let moduleRef: TestingModule;
    let consumer: Consumer;
    const main = () => consumer.main;
    const audit = () => consumer.audit;

    beforeAll(async () => {
      delivered.length = 0;
      SeeingRateLimiter.seen.length = 0;
      const common = {
        dataSource: ctx.dataSource,
        schema: 'create' as const,
        pollInterval: '1h',
        wakeOnAccept: false,
      };
      moduleRef = await Test.createTestingModule({
        imports: [
          SimbaModule.forRoot({ dataSource: ctx.dataSource, tablePrefix: ctx.prefix, schema: 'create' }),
          InboxModule.forRoot({ ...common, tablePrefix: `${ctx.prefix}p_` }),
          InboxModule.forRoot({
            ...common,
            name: 'audit',
            tablePrefix: `${ctx.prefix}q_`,
            leaderMutex: 'holdfast-inbox-parts-audit',
          }),
          FeatureModule,
        ],
      })
        // A factory: called once per inbox module, with that inbox's connection.
        .overrideProvider(RateLimiter)
        .useFactory({
          factory: (connection: InboxConnection) => new SeeingRateLimiter(connection),
          inject: [InboxConnection],
        })
        .compile();
      await moduleRef.init();
      consumer = moduleRef.select(FeatureModule).get(Consumer);
      await waitUntil(() => (main().isDelivering() && audit().isDelivering()) || undefined, {
        timeout: 20_000,
        message: 'both inboxes delivering',
      });
    });
    afterAll(() => moduleRef?.close());

    it('claims through the replaced part, each inbox through its own', async () => {
      const { acceptor, auditAcceptor } = consumer;
      await acceptor.accept({ id: 'm1', type: TYPE, payload: {} });
      await auditAcceptor.accept({ id: 'a1', type: TYPE, payload: {} });
      expect((await main().deliverDue()).delivered).toBe(1);
      expect((await audit().deliverDue()).delivered).toBe(1);
      expect(delivered.sort()).toEqual(['audit:a1', 'main:m1']);
      const seen = SeeingRateLimiter.seen.map((s) => s.toLowerCase());
      expect(seen).toHaveLength(2);
      expect(seen.find((s) => s.endsWith(':m1'))).toContain(`${ctx.prefix}p_`.toLowerCase());
      expect(seen.find((s) => s.endsWith(':a1'))).toContain(`${ctx.prefix}q_`.toLowerCase());
    });
  },
  { tag: 'parts' },
);
