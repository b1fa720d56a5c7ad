import { Injectable, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { describeEachDatabase, waitUntil } from '@holdfast/testing';
import {
  getInboxToken,
  InboxHandler,
  InboxModule,
  InjectInboxOptions,
  InjectMessageAcceptor,
  InjectMessageManagement,
  MessageAcceptor,
  MessageManagement,
  type InboxMessage,
  type ResolvedInboxOptions,
} from '@holdfast/inbox';
import { InvalidOptionsError } from '@holdfast/core/kit';
import { SimbaModule } from '@holdfast/simba';

/**
 * Two inboxes in one application (issue 14, item 4), as two named DataSources in @nestjs/typeorm:
 * the default one and `name: 'audit'`, each on its own table, each delivering to its own handlers
 * and injected by `InjectX(name)`.
 */

const TYPE = { namespace: 'named', name: 'note' };
const delivered: Array<{ inbox: string; id: string }> = [];

@Injectable()
class Handlers {
  @InboxHandler(TYPE)
  async orders(message: InboxMessage): Promise<void> {
    delivered.push({ inbox: 'default', id: message.id });
  }

  @InboxHandler({ ...TYPE, inbox: 'audit' })
  async audit(message: InboxMessage): Promise<void> {
    delivered.push({ inbox: 'audit', id: message.id });
  }
}

@Injectable()
class Consumer {
  constructor(
    readonly acceptor: MessageAcceptor,
    @InjectMessageAcceptor() readonly defaultAcceptor: MessageAcceptor,
    @InjectMessageAcceptor('audit') readonly auditAcceptor: MessageAcceptor,
    @InjectMessageManagement('audit') readonly auditManagement: MessageManagement,
    @InjectInboxOptions() readonly defaultOptions: ResolvedInboxOptions,
    @InjectInboxOptions('audit') readonly auditOptions: ResolvedInboxOptions,
  ) {}
}

/** Imports neither inbox: both are global. */
@Module({ providers: [Consumer, Handlers] })
class FeatureModule {}

describeEachDatabase(
  'two named inboxes in one application',
  (ctx) => {
    let moduleRef: TestingModule;
    let consumer: Consumer;
    beforeAll(async () => {
      delivered.length = 0;
      const common = { dataSource: ctx.dataSource, schema: 'create' as const, pollInterval: '100ms' };
      moduleRef = await Test.createTestingModule({
        imports: [
          // Leader mode (SQLite's only one) elects each inbox's deliverer on its own mutex.
          SimbaModule.forRoot({ dataSource: ctx.dataSource, tablePrefix: ctx.prefix, schema: 'create' }),
          InboxModule.forRoot({ ...common, tablePrefix: `${ctx.prefix}a_` }),
          InboxModule.forRootAsync({
            name: 'audit',
            useFactory: () => ({
              ...common,
              tablePrefix: `${ctx.prefix}b_`,
              leaderMutex: 'holdfast-inbox-audit',
            }),
          }),
          FeatureModule,
        ],
      }).compile();
      await moduleRef.init();
      consumer = moduleRef.select(FeatureModule).get(Consumer);
    });
    afterAll(() => moduleRef?.close());

    it('injects each inbox by its name; the default one also by its class', () => {
      expect(consumer.defaultAcceptor).toBe(consumer.acceptor);
      expect(consumer.auditAcceptor).toBeInstanceOf(MessageAcceptor);
      expect(consumer.auditAcceptor).not.toBe(consumer.acceptor);
      expect(moduleRef.get(getInboxToken(MessageAcceptor, 'audit'))).toBe(consumer.auditAcceptor);
      expect(getInboxToken(MessageAcceptor)).toBe(MessageAcceptor);
      expect(consumer.defaultOptions.tablePrefix).toBe(`${ctx.prefix}a_`);
      expect(consumer.auditOptions.tablePrefix).toBe(`${ctx.prefix}b_`);
    });

    it('keeps each inbox on its own table and delivers to its own handlers', async () => {
      await consumer.acceptor.accept({ id: 'to-default', type: TYPE, payload: { n: 1 } });
      await consumer.auditAcceptor.accept({ id: 'to-audit', type: TYPE, payload: { n: 2 } });
      await waitUntil(() => delivered.length >= 2 || undefined, {
        timeout: 20_000,
        message: 'both messages delivered',
      });
      expect(delivered.sort((a, b) => a.id.localeCompare(b.id))).toEqual([
        { inbox: 'audit', id: 'to-audit' },
        { inbox: 'default', id: 'to-default' },
      ]);
      expect((await consumer.auditManagement.count()).total).toBe(0);
    });
  },
  { tag: 'inbox2' },
);

describe('InboxModule.forRoot({ name }) with a bad name', () => {
  it.each([[''], [' '], ['audit '], [42]])('refuses %p with a typed InvalidOptionsError', (name) => {
    const declare = () => InboxModule.forRoot({ dataSource: 'default', name: name as string });
    expect(declare).toThrow(InvalidOptionsError);
    expect(declare).toThrow(/InboxModule[^]*non-empty string without surrounding spaces/);
  });
});
