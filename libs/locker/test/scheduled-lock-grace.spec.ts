/**
 * @ScheduledLock after a lossy PostgreSQL failover (#36): a run's lock is a lease of
 * lockAtMostFor, so a run the old primary let start and the new one lost may still be going. The
 * first lock attempt on a new timeline starts no run and puts the rows into their grace; a row in
 * grace is taken once lockAtMostFor has passed since. The promotion is simulated by moving the
 * table's timeline marker, as the lease locker's own test does
 * (test/cluster/locker-failover-grace.spec.ts does a real failover for the lease locker).
 */
import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { toNumber, statement } from '@holdfast/core/kit';
import { describeEachDatabase, waitUntil } from '@holdfast/testing';
import { ScheduledLock, ScheduledLockConfigurationError, ScheduledLockModule, lockTable } from '../src';

const AT_MOST = 3_000;
const MARKER = 'holdfast:timeline';
const GRACE = 'holdfast:failover-grace';

@Injectable()
class Report {
  runs = 0;
  @ScheduledLock({ name: 'report', lockAtMostFor: AT_MOST })
  async build(): Promise<void> {
    this.runs++;
  }
}

describeEachDatabase(
  '@ScheduledLock: no run during one the old primary may have let start',
  (ctx) => {
    const apps: TestingModule[] = [];
    afterEach(async () => {
      await Promise.all(apps.splice(0).map((a) => a.close()));
    });
    const instance = async (): Promise<Report> => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          ScheduledLockModule.forRoot({
            dataSource: ctx.dataSource,
            tablePrefix: ctx.prefix,
            schema: 'create',
          }),
        ],
        providers: [Report],
      }).compile();
      apps.push(moduleRef);
      await moduleRef.init();
      return moduleRef.get(Report);
    };
    const rows = async () =>
      (
        await ctx.sql.query<{ id: unknown; time: unknown; holder: unknown }>(
          statement(
            `SELECT ID AS id, TIME AS time, BROKER_NAME AS holder FROM ${ctx.prefix}HOLDFAST_LOCK ORDER BY ID`,
          ),
        )
      ).map((r) => ({ id: String(r.id), time: r.time == null ? null : toNumber(r.time), holder: r.holder }));

    it("refuses the marker's name as a job's lock name", () => {
      expect(() =>
        ScheduledLock({ name: MARKER, lockAtMostFor: '1m' })(Report.prototype, 'build', {}),
      ).toThrow(ScheduledLockConfigurationError);
    });

    if (ctx.db !== 'postgres') {
      it('no marker row where a promotion cannot lose commits', async () => {
        const a = await instance();
        await a.build();
        expect(a.runs).toBe(1);
        expect((await rows()).map((r) => r.id)).toEqual(['report']);
      });
      return;
    }

    it('after a promotion no run starts until lockAtMostFor has passed; then one does', async () => {
      const a = await instance();
      await a.build();
      expect(a.runs).toBe(1);
      expect((await rows()).map((r) => r.id).sort()).toEqual([MARKER, 'report']);

      // The new primary's timeline differs from the one the table was last written on.
      await ctx.sql.execute(
        statement(`UPDATE ${ctx.prefix}HOLDFAST_LOCK SET TIME = TIME + 1 WHERE ID = '${MARKER}'`),
      );
      const b = await instance();
      await b.build();
      expect(b.runs).toBe(0);
      const graced = (await rows()).find((r) => r.id === 'report');
      expect(graced?.holder).toBe(GRACE);

      // Within the grace: neither instance runs the job.
      await a.build();
      await b.build();
      const inGrace = (await rows()).find((r) => r.id === 'report');
      const now = toNumber(
        (await ctx.sql.query<{ now: unknown }>(statement(`SELECT ${ctx.sql.dialect.nowMillis} AS now`)))[0]
          .now,
      );
      if (now < graced!.time! + AT_MOST) {
        expect(a.runs + b.runs).toBe(1);
        expect(inGrace?.holder).toBe(GRACE);
      }

      // Once lockAtMostFor has passed since the grace began, the next tick runs.
      await waitUntil(
        async () => {
          await b.build();
          return b.runs === 1;
        },
        { timeout: 20_000, interval: 100, message: 'a run after the grace' },
      );
      const ranAt = toNumber(
        (await ctx.sql.query<{ now: unknown }>(statement(`SELECT ${ctx.sql.dialect.nowMillis} AS now`)))[0]
          .now,
      );
      expect(ranAt).toBeGreaterThanOrEqual(graced!.time! + AT_MOST);
    });
  },
  { tables: [lockTable()] },
);
