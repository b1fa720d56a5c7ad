/**
 * The lease locker's grace after a lossy failover (#36), on one server: a promotion is what the
 * first lease write sees when the table's timeline marker names another timeline than the
 * server's, so the test moves the marker by hand (test/cluster/locker-failover-grace.spec.ts does
 * the real failover). PostgreSQL only has the marker; elsewhere the table holds the lock rows only.
 */
import { toNumber, statement } from '@holdfast/core/kit';
import { describeEachDatabase, type TestDatabaseContext } from '@holdfast/testing';
import { LockerConfigurationError, readLockerStatus, type LockerModuleOptions } from '@holdfast/locker';
import { toLockStatus } from '@holdfast/locker/internal';
import { lockerInstance, waitUntil, type TestInstance } from './locker-test-kit';

jest.setTimeout(60_000);

const LEASE = 1_500;
const MARKER = 'holdfast:timeline';
const GRACE = 'holdfast:failover-grace';

describeEachDatabase(
  'lease-database locker: no lease during one the old primary may have granted',
  (ctx: TestDatabaseContext) => {
    const open: TestInstance[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((i) => i.close()));
    });

    const start = async (prefix: string, options: Partial<LockerModuleOptions> = {}) => {
      const instance = await lockerInstance({
        dataSource: ctx.dataSource,
        tablePrefix: prefix,
        schema: 'create',
        locker: { type: 'lease-database' },
        lockAcquireSleepInterval: LEASE,
        lockKeepAlivePeriod: 300,
        startup: 'background',
        ...options,
      });
      open.push(instance);
      await instance.init();
      return instance;
    };
    const rows = async (prefix: string) =>
      (
        await ctx.sql.query<{ id: unknown; time: unknown; holder: unknown }>(
          statement(
            `SELECT ID AS id, TIME AS time, BROKER_NAME AS holder FROM ${prefix}HOLDFAST_LOCK ORDER BY ID`,
          ),
        )
      ).map((r) => ({ id: String(r.id), time: r.time == null ? null : toNumber(r.time), holder: r.holder }));
    const lockRow = async (prefix: string) => (await rows(prefix)).find((r) => r.id === 'default');
    /** What the first lease write after a promotion finds: the marker names another timeline. */
    const promote = (prefix: string) =>
      ctx.sql.execute(statement(`UPDATE ${prefix}HOLDFAST_LOCK SET TIME = TIME + 1 WHERE ID = '${MARKER}'`));
    /** The row in its grace, read while it lasts (TIME: the detection time or a later expiry). */
    const graced = async (prefix: string): Promise<{ time: number }> => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const row = await lockRow(prefix);
        if (row?.holder === GRACE && row.time !== null) return { time: row.time };
        if (Date.now() > deadline) throw new Error(`no grace: ${JSON.stringify(await rows(prefix))}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };

    if (ctx.db !== 'postgres') {
      it('no marker row: the table holds the lock row only', async () => {
        const prefix = `${ctx.prefix}N_`;
        const a = await start(prefix, { startup: 'block' });
        expect(a.locker.isMaster).toBe(true);
        expect((await rows(prefix)).map((r) => r.id)).toEqual(['default']);
      });
      return;
    }

    it("a master's renewal after a promotion fails; the lease is taken again only once the grace has passed", async () => {
      const prefix = `${ctx.prefix}R_`;
      const a = await start(prefix, { startup: 'block' });
      expect(a.locker.isMaster).toBe(true);
      // The marker keeps the server's timeline; the listings leave it out.
      expect((await rows(prefix)).map((r) => r.id)).toEqual(['default', MARKER]);
      expect((await readLockerStatus(ctx.sql, { tablePrefix: prefix })).locks!.map((s) => s.lock)).toEqual([
        'default',
      ]);

      await promote(prefix);
      const grace = await graced(prefix);
      // Nobody is master during the grace: the old master demoted, its renewal matched nothing.
      await waitUntil(() => a.events.some((e) => e.type === 'lost'), 20_000, 'the demotion');
      // The listings show a row in its grace without a master.
      expect(
        toLockStatus({ lock_id: 'default', broker_name: GRACE, lock_time: grace.time }, grace.time).master,
      ).toBeNull();

      await waitUntil(() => a.locker.isMaster, 20_000, 'the master again after the grace');
      const taken = (await lockRow(prefix))!;
      expect(taken.holder).toBe(a.locker.instanceId);
      // Taken at TIME − lease (database clock); renewals since only move TIME later.
      expect(taken.time! - LEASE).toBeGreaterThanOrEqual(grace.time + LEASE);
      // The detection moved the marker to the server's timeline: no second grace.
      expect((await rows(prefix)).find((r) => r.id === MARKER)?.holder).toBe(MARKER);
    });

    it('a freshly started instance sees the promotion first; no instance takes the lease before the grace has passed; a row a database-locker master holds is left alone', async () => {
      const prefix = `${ctx.prefix}F_`;
      const a = await start(prefix, { startup: 'block' });
      const db = await start(prefix, { locker: { type: 'database' }, lockName: 'rows', startup: 'block' });
      expect(db.locker.isMaster).toBe(true);
      await a.close(); // released: the row is free
      await promote(prefix);

      const b = await start(prefix);
      const grace = await graced(prefix);
      // One more starts during the grace: its first attempt comes at once, and must not take.
      const c = await start(prefix);
      await waitUntil(() => b.locker.isMaster || c.locker.isMaster, 20_000, 'a fresh instance as master');
      const taken = (await lockRow(prefix))!;
      expect(taken.time! - LEASE).toBeGreaterThanOrEqual(grace.time + LEASE);
      // The database locker's row, held FOR UPDATE by its master's open transaction, was skipped,
      // not waited for (a wait would have lasted as long as that master: no take at all).
      expect((await rows(prefix)).find((r) => r.id === 'rows')?.holder).not.toBe(GRACE);
      expect(db.locker.isMaster).toBe(true);
      await Promise.all(open.splice(0).map((i) => i.close()));
    });

    it('the marker name is no lock name, and the grace holder no leaseHolderId', async () => {
      const prefix = `${ctx.prefix}X_`;
      const byName = await lockerInstance({
        dataSource: ctx.dataSource,
        tablePrefix: prefix,
        schema: 'create',
        locker: { type: 'lease-database' },
        lockName: MARKER,
        lockAcquireSleepInterval: LEASE,
        lockKeepAlivePeriod: 300,
        startup: 'block',
      });
      open.push(byName);
      await expect(byName.init()).rejects.toBeInstanceOf(LockerConfigurationError);
      const byHolder = await lockerInstance({
        dataSource: ctx.dataSource,
        tablePrefix: prefix,
        schema: 'create',
        locker: { type: 'lease-database', leaseHolderId: GRACE },
        lockAcquireSleepInterval: LEASE,
        lockKeepAlivePeriod: 300,
        startup: 'block',
      });
      open.push(byHolder);
      await expect(byHolder.init()).rejects.toBeInstanceOf(LockerConfigurationError);
    });
  },
);
