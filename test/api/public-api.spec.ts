import { Injectable, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { sqlDialect } from '@holdfast/core/kit';
import { describeEachDatabase, type TestDatabaseContext } from '@holdfast/testing';
import * as failover from '@holdfast/failover';
import * as failoverInternal from '@holdfast/failover/internal';
import * as inbox from '@holdfast/inbox';
import * as inboxInternal from '@holdfast/inbox/internal';
import * as locker from '@holdfast/locker';
import * as simba from '@holdfast/simba';
import * as simbaInternal from '@holdfast/simba/internal';
import { HoldfastDashboardModule } from '@holdfast/dashboard';

/**
 * The uniform public API (issue 14, item 4): every module is global by default, so a provider in
 * a module that imports none of them can inject their services; options and the failover store
 * are injected through `InjectX()` helpers; plumbing is not in the main entries.
 */

@Injectable()
class Consumer {
  constructor(
    readonly acceptor: inbox.MessageAcceptor,
    readonly management: inbox.MessageManagement,
    readonly lockerService: locker.LockerService,
    readonly simbaLocker: simba.SimbaLocker,
    readonly contend: simba.MutexContendServiceFactory,
    readonly executor: failover.FailoverExecutor,
    @failover.InjectFailoverStore() readonly store: failover.FailoverStore,
    @failover.InjectFailoverOptions() readonly failoverOptions: failover.ResolvedFailoverModuleOptions,
    @simba.InjectSimbaOptions() readonly simbaOptions: simba.ResolvedSimbaOptions,
    @locker.InjectLockerOptions() readonly lockerOptions: locker.ResolvedLockerOptions,
    @inbox.InjectInboxOptions() readonly inboxOptions: inbox.ResolvedInboxOptions,
  ) {}
}

/** Imports none of the Holdfast modules: what it gets, it gets because they are global. */
@Module({ providers: [Consumer], exports: [Consumer] })
class FeatureModule {}

async function boot(ctx: TestDatabaseContext): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      FailoverModule(ctx),
      simba.SimbaModule.forRoot({
        dataSource: ctx.dataSource,
        tablePrefix: ctx.prefix,
        schema: 'create',
        ttl: '7s',
        transition: '3s',
        autoStart: false,
      }),
      locker.LockerModule.forRoot({
        dataSource: ctx.dataSource,
        tablePrefix: ctx.prefix,
        schema: 'create',
        locker: { type: 'lease-database' },
        lockName: 'public-api',
        useLock: false,
      }),
      inbox.InboxModule.forRoot({
        dataSource: ctx.dataSource,
        tablePrefix: ctx.prefix,
        schema: 'create',
        pollInterval: '1h',
        cleanupInterval: '1h',
        batchSize: 7,
      }),
      HoldfastDashboardModule.forRoot({}),
      FeatureModule,
    ],
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

function FailoverModule(ctx: TestDatabaseContext) {
  return failover.FailoverModule.forRoot({
    store: { type: 'sql', dataSource: ctx.dataSource, tablePrefix: ctx.prefix, schema: 'create' },
  });
}

describeEachDatabase(
  'the public API: global modules and InjectX() helpers',
  (ctx) => {
    let moduleRef: TestingModule;
    beforeAll(async () => {
      moduleRef = await boot(ctx);
    });
    afterAll(() => moduleRef?.close());

    it('gives a module that imports none of them every service and option, by default', () => {
      const consumer = moduleRef.select(FeatureModule).get(Consumer);
      expect(consumer.acceptor).toBe(moduleRef.get(inbox.MessageAcceptor));
      expect(consumer.management).toBe(moduleRef.get(inbox.MessageManagement));
      expect(consumer.lockerService).toBe(moduleRef.get(locker.LockerService));
      expect(consumer.simbaLocker).toBe(moduleRef.get(simba.SimbaLocker));
      expect(consumer.contend).toBe(moduleRef.get(simba.MutexContendServiceFactory));
      expect(consumer.executor).toBe(moduleRef.get(failover.FailoverExecutor));
    });

    it('InjectFailoverStore() injects the store the module was given', async () => {
      const consumer = moduleRef.select(FeatureModule).get(Consumer);
      expect(consumer.store).toBe(moduleRef.get(failover.getFailoverStoreToken()));
      expect(consumer.store).toBeInstanceOf(failoverInternal.SqlFailoverStore);
    });

    it("each lib's status tokens find the running module's parts, from the main entry (issue 44, item 5)", async () => {
      const consumer = moduleRef.select(FeatureModule).get(Consumer);
      const get = <T>(token: unknown) => moduleRef.get<T>(token as symbol, { strict: false });
      expect(get(simba.SIMBA_STATUS_TOKENS.options)).toBe(consumer.simbaOptions);
      expect(get(locker.LOCKER_STATUS_TOKENS.options)).toBe(consumer.lockerOptions);
      expect(get(inbox.INBOX_STATUS_TOKENS.name)).toBe(inbox.INBOX_STATUS_TOKENS.defaultName);
      expect(typeof (await get<{ now(): Promise<number> }>(inbox.INBOX_STATUS_TOKENS.clock).now())).toBe(
        'number',
      );
      const f = failover.FAILOVER_STATUS_TOKENS;
      expect(get(f.storeName)).toBe(f.defaultStore);
      expect(get(f.registry)).toBeInstanceOf(failoverInternal.FailoverRegistry);
      expect(get(f.writer)).toBeInstanceOf(failoverInternal.FailoverWriter);
    });

    it('InjectXOptions() injects the validated options, defaults filled in', () => {
      const consumer = moduleRef.select(FeatureModule).get(Consumer);
      expect(consumer.simbaOptions).toMatchObject({ ttl: 7000, transition: 3000, autoStart: false });
      expect(consumer.lockerOptions).toMatchObject({ lockName: 'public-api', useLock: false });
      expect(consumer.inboxOptions).toMatchObject({ batchSize: 7, tablePrefix: ctx.prefix });
      expect(consumer.failoverOptions).toMatchObject({
        async: { maxBatch: 500 },
        exceptionPolicy: 'rethrow',
      });
    });
  },
  { tag: 'api' },
);

describe('the main entries', () => {
  it("export each lib's table specs by role, the ones the lib creates (issue 44, item 5)", () => {
    expect(failover.FAILOVER_TABLES.store).toBe(failoverInternal.FAILOVER_STORE_TABLE);
    expect(inbox.INBOX_TABLES).toEqual({
      message: inboxInternal.COR_MESSAGE_TABLE,
      lease: inboxInternal.INBOX_LEASE_TABLE,
      group: inboxInternal.INBOX_GROUP_TABLE,
      history: inboxInternal.INBOX_HISTORY_TABLE,
      stats: inboxInternal.INBOX_STATS_TABLE,
      pause: inboxInternal.INBOX_PAUSE_TABLE,
      rate: inboxInternal.INBOX_RATE_TABLE,
    });
    expect(locker.LOCKER_TABLES.lock.name).toBe('HOLDFAST_LOCK');
    expect(simba.SIMBA_TABLES.mutex.name).toBe('simba_mutex');
    expect(inbox.readMessageHistory).toBe(inboxInternal.readMessageHistory);
  });

  it("give migrations what an earlier inbox layout needs, without '/internal' (issue 44, item 6)", () => {
    const upgrades = inbox.INBOX_TABLE_UPGRADES;
    expect(typeof upgrades.epochMillisTimes.applies).toBe('function');
    expect(typeof upgrades.epochMillisTimes.sql).toBe('function');
    expect(upgrades.traceContext.column.name).toBe('TRACE_CONTEXT');
    expect(upgrades.priority.index.name).toBe('COR_MESSAGE_PRIO_IDX');
    expect(upgrades.typeIndex.index.name).toBe('COR_MESSAGE_TYPE_IDX');
    expect(upgrades.typeIndex.sql(sqlDialect('postgres'), 'p_')).toEqual([
      'CREATE INDEX p_COR_MESSAGE_TYPE_IDX ON p_COR_MESSAGE (PAYLOAD_TYPE_NAME, INSERTED, ID)',
    ]);
  });

  it('leave the plumbing to the internal subpath', () => {
    for (const name of ['FailoverWriter', 'FailoverStores', 'PayloadCodec', 'SqlFailoverStore']) {
      expect(Object.keys(failover)).not.toContain(name);
      expect(Object.keys(failoverInternal)).toContain(name);
    }
    for (const name of ['CorMessageStore', 'InboxConnection', 'InboxClock', 'COR_MESSAGE_TABLE']) {
      expect(Object.keys(inbox)).not.toContain(name);
      expect(Object.keys(inboxInternal)).toContain(name);
    }
    // Issue 44, item 6: what an application has no use for. The built-in cipher and its column
    // resolver are what `store.encryption` builds; Simba's reads of its own table and the default
    // fence property are the repository's and the dashboard's, not the application's.
    for (const name of ['Aes256GcmCipher', 'EncryptingPayloadColumnResolver']) {
      expect(Object.keys(failover)).not.toContain(name);
      expect(Object.keys(failoverInternal)).toContain(name);
    }
    for (const name of ['MutexOwnerRepository', 'MutexOwnerEntity', 'DEFAULT_FENCE_PROPERTY']) {
      expect(Object.keys(simba)).not.toContain(name);
      expect(Object.keys(simbaInternal)).toContain(name);
    }
    // A delivery statement's timeout is the delivery loop's own (an outage), never a caller's.
    expect(Object.keys(inbox)).not.toContain('NoAnswerError');
  });
});
