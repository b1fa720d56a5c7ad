import { describeEachDatabase, type TestDatabaseContext } from '@holdfast/testing';
import { LockHeldError, LockerHealthIndicator, type LockerModuleOptions } from '@holdfast/locker';
import { lockerInstance, sleep, waitUntil, type TestInstance } from './locker-test-kit';
import { statement } from '@holdfast/core/kit';

const INTERVAL = 500;
const KEEP_ALIVE = 120;
/**
 * The attempt interval (and, for lease-database, the lease) where a master must stay master for
 * seconds while the machine is busy: a lease of INTERVAL is lost to a stall of under 0.4 s (a CI
 * run with two Jest workers on two cores showed it), one of this survives stalls of 1.5 s.
 */
const STEADY_INTERVAL = 2_000;
const STEADY = { lockAcquireSleepInterval: STEADY_INTERVAL };

describeEachDatabase(
  'LockerModule in one process',
  (ctx: TestDatabaseContext) => {
    const open: TestInstance[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((i) => i.close()));
    });

    const start = async (
      options: Partial<LockerModuleOptions> & Pick<LockerModuleOptions, 'locker'>,
      lockName: string,
    ) => {
      const instance = await lockerInstance({
        dataSource: ctx.dataSource,
        tablePrefix: ctx.prefix,
        schema: 'create',
        lockName,
        lockAcquireSleepInterval: INTERVAL,
        lockKeepAlivePeriod: KEEP_ALIVE,
        startup: 'background',
        ...options,
      });
      open.push(instance);
      return instance;
    };

    for (const type of ['lease-database', 'database'] as const) {
      describe(type, () => {
        it('failIfLocked makes a standby bootstrap fail at once with LockHeldError', async () => {
          const master = await start({ locker: { type }, startup: 'block' }, `${type}-fail`);
          await master.init();
          expect(master.locker.isMaster).toBe(true);
          // A long interval: if failIfLocked were ignored, init would wait (block) and time out.
          const standby = await start(
            {
              locker: { type },
              failIfLocked: true,
              lockAcquireSleepInterval: 120_000,
              lockKeepAlivePeriod: 1_000,
            },
            `${type}-fail`,
          );
          const error = await standby.init().catch((e: unknown) => e);
          expect(error).toBeInstanceOf(LockHeldError);
          expect((error as LockHeldError).lockName).toBe(`${type}-fail`);
          if (type === 'lease-database')
            expect((error as LockHeldError).holder).toBe(master.locker.instanceId);
          expect(standby.locker.isMaster).toBe(false);
          expect(master.locker.isMaster).toBe(true);
        });

        it("startup 'block' waits to be master; release on close hands over; handlers run", async () => {
          const first = await start({ locker: { type }, startup: 'block', ...STEADY }, `${type}-block`);
          await first.init();
          expect(first.events).toEqual([
            { type: 'acquired', lockName: `${type}-block`, holder: first.locker.instanceId },
          ]);
          expect(first.locker.holder).toBe(first.locker.instanceId);

          const second = await start({ locker: { type }, startup: 'block', ...STEADY }, `${type}-block`);
          let bootstrapped = false;
          const booting = second.init().then(() => (bootstrapped = true));
          await sleep(2 * STEADY_INTERVAL); // two attempts
          expect(bootstrapped).toBe(false);
          expect(second.locker.role).toBe('standby');
          if (type === 'lease-database')
            expect(await second.locker.readHolder()).toBe(first.locker.instanceId);

          await first.close();
          expect(first.events.at(-1)).toMatchObject({ type: 'lost', reason: 'stopped' });
          await booting;
          expect(second.locker.isMaster).toBe(true);
          expect(second.events.map((e) => e.type)).toEqual(['acquired']);
        });

        it('keeps the lock alive and reports master/standby through LockerService and the health indicator', async () => {
          const master = await start({ locker: { type }, ...STEADY }, `${type}-alive`);
          await master.init();
          await waitUntil(() => master.locker.isMaster, 10_000, 'master');
          const standby = await start({ locker: { type }, ...STEADY }, `${type}-alive`);
          await standby.init();
          const firstKeepAlive = master.locker.lastKeepAlive!.getTime();
          await sleep(1.5 * STEADY_INTERVAL); // past one whole lease: renewed, not run out
          expect(master.locker.isMaster).toBe(true);
          expect(standby.locker.role).toBe('standby');
          expect(master.locker.lastKeepAlive!.getTime()).toBeGreaterThan(firstKeepAlive);
          expect(await master.moduleRef.get(LockerHealthIndicator).isHealthy()).toEqual({
            locker: expect.objectContaining({
              status: 'up',
              role: 'master',
              holder: master.locker.instanceId,
            }),
          });
          expect(await standby.moduleRef.get(LockerHealthIndicator).isHealthy()).toEqual({
            locker: expect.objectContaining({ status: 'up', role: 'standby' }),
          });
        });
      });
    }

    it('lease-database: keepAlive false (lease taken behind our back) demotes in-process, then re-acquires as standby', async () => {
      const lockName = 'lease-stolen';
      const instance = await start({ locker: { type: 'lease-database' } }, lockName);
      await instance.init();
      await waitUntil(() => instance.locker.isMaster, 10_000, 'master');
      const d = ctx.sql.dialect;
      // Someone else's lease, valid for two intervals from the database's point of view.
      await ctx.sql.execute(
        statement(
          `UPDATE ${ctx.prefix}HOLDFAST_LOCK SET BROKER_NAME = ${d.placeholder(1)}, TIME = ${d.nowMillis} + ${d.placeholder(2)} WHERE ID = ${d.placeholder(3)}`,
          ['thief', 2 * INTERVAL, lockName],
        ),
      );
      await waitUntil(() => instance.events.some((e) => e.type === 'lost'), 10_000, 'lost');
      expect(instance.events.find((e) => e.type === 'lost')).toMatchObject({ reason: 'keep-alive-false' });
      expect(instance.locker.isMaster).toBe(false);
      expect(instance.locker.role).toBe('standby');
      expect(await instance.locker.readHolder()).toBe('thief');
      // No restart: the same instance waits out the thief's lease and becomes master again.
      await waitUntil(
        () => instance.events.filter((e) => e.type === 'acquired').length === 2,
        20_000,
        're-acquire',
      );
      expect(instance.locker.isMaster).toBe(true);
      expect(instance.events.map((e) => e.type)).toEqual(['acquired', 'lost', 'acquired']);
    });

    // A renewal or acquisition that the server ran after the instance gave up on it (the server
    // paused, then resumed) leaves the lease in the name of an instance that has stepped down.
    const leaveOwnLease = async (instance: TestInstance, lockName: string) => {
      const d = ctx.sql.dialect;
      const setHolder = (holder: string) =>
        ctx.sql.execute(
          statement(
            `UPDATE ${ctx.prefix}HOLDFAST_LOCK SET BROKER_NAME = ${d.placeholder(1)}, TIME = ${d.nowMillis} + ${d.placeholder(2)} WHERE ID = ${d.placeholder(3)}`,
            [holder, 60_000, lockName],
          ),
        );
      await instance.init();
      await waitUntil(() => instance.locker.isMaster, 10_000, 'master');
      await setHolder('thief'); // the instance steps down (keep-alive false) and releases nothing
      await waitUntil(() => instance.events.some((e) => e.type === 'lost'), 10_000, 'lost');
      await setHolder(instance.locker.instanceId); // a lease in its name for another minute
    };

    it('lease-database: a standby takes back at its next attempt a lease still in its own name', async () => {
      const lockName = 'lease-own';
      const instance = await start({ locker: { type: 'lease-database' } }, lockName);
      await leaveOwnLease(instance, lockName);
      // Without the take-back nobody could have the lock for a minute.
      await waitUntil(
        () => instance.events.filter((e) => e.type === 'acquired').length === 2,
        10_000,
        'the own lease taken back',
      );
      expect(instance.events.map((e) => e.type)).toEqual(['acquired', 'lost', 'acquired']);
    });

    it('lease-database: with a configured leaseHolderId (maybe shared), a lease in that name is left to run out', async () => {
      const lockName = 'lease-own-configured';
      const instance = await start(
        { locker: { type: 'lease-database', leaseHolderId: 'fixed-name' } },
        lockName,
      );
      await leaveOwnLease(instance, lockName);
      await sleep(8 * INTERVAL); // eight attempts
      expect(instance.locker.isMaster).toBe(false);
      expect(instance.events.map((e) => e.type)).toEqual(['acquired', 'lost']);
    });

    it("database: the master's own DataSource can still write while the lock is held", async () => {
      const instance = await start({ locker: { type: 'database' }, startup: 'block' }, 'db-writes');
      await instance.init();
      expect(instance.locker.isMaster).toBe(true);
      const table = `${ctx.prefix}LOCKER_APP_DATA`;
      await ctx.sql.execute(statement(`CREATE TABLE ${table} (ID INT PRIMARY KEY, V VARCHAR(20))`));
      try {
        const d = ctx.sql.dialect;
        await ctx.sql.execute(
          statement(`INSERT INTO ${table} (ID, V) VALUES (${d.placeholders(2)})`, [1, 'written']),
        );
        await ctx.sql.transaction((tx) =>
          tx.execute(statement(`UPDATE ${table} SET V = ${d.placeholder(1)}`, ['updated'])),
        );
        expect(await ctx.sql.query(statement(`SELECT V AS v FROM ${table}`))).toEqual([{ v: 'updated' }]);
        expect(instance.locker.isMaster).toBe(true);
      } finally {
        await ctx.sql.execute(statement(`DROP TABLE ${table}`));
      }
    });
  },
  { tables: ['HOLDFAST_LOCK'] },
);
