/**
 * The grace after a PostgreSQL promotion (#36), without a failover: the table's timeline marker is
 * set to another timeline, as if the table had last been written before a promotion, and the next
 * tick must clear the owner and hold the mutex for ttl + transition. The lossy failover itself, on
 * real replication, is test/cluster/pg-failover-grace.spec.ts.
 */
import type { INestApplicationContext } from '@nestjs/common';
import { InvalidMutexNameError, MutexContendServiceFactory, OnMutexAcquired, readSimbaStatus } from '../src';
import { MutexOwnerRepository } from '../src/internal';
import { TIMELINE_MARKER, statement } from '@holdfast/core/kit';
import {
  createSimbaApp,
  describeEachSimbaTable,
  freshMutex,
  RecordingContender,
  waitUntil,
} from './simba-test.support';

jest.setTimeout(60_000);

describe('the timeline marker row', () => {
  it('is a reserved name: no contender, decorator or lookup may use it', () => {
    expect(() => OnMutexAcquired(TIMELINE_MARKER)).toThrow(InvalidMutexNameError);
    expect(() => OnMutexAcquired(TIMELINE_MARKER)).toThrow(/reserved/);
  });
});

describeEachSimbaTable('Simba after a promotion', (ctx) => {
  let app: INestApplicationContext;
  beforeAll(async () => {
    app = await createSimbaApp(ctx, { ttl: '1s', transition: '1s' });
  });
  afterAll(() => app?.close());

  const marker = async () =>
    (
      await ctx.sql.query<{ acquired_at: unknown }>(
        statement(`SELECT acquired_at FROM ${ctx.prefix}simba_mutex WHERE mutex = '${TIMELINE_MARKER}'`),
      )
    )[0];

  it('PostgreSQL: a new timeline clears the owner and holds the mutex for ttl + transition; elsewhere no marker', async () => {
    const contender = new RecordingContender(freshMutex('grace'));
    const service = app.get(MutexContendServiceFactory).createMutexContendService(contender);
    service.start();
    try {
      await waitUntil(() => service.isOwner, 20_000, 'a first grant');
      const owners = await app.get(MutexOwnerRepository).getOwners();
      expect(owners.map((o) => o.mutex)).not.toContain(TIMELINE_MARKER);
      // Neither Simba's status read-model (the dashboard's and the CLI's reading of the table).
      const status = await readSimbaStatus(ctx.sql, { tablePrefix: ctx.prefix });
      expect(status.mutexes?.map((m) => m.mutex)).not.toContain(TIMELINE_MARKER);
      if (ctx.db !== 'postgres') {
        expect(await marker()).toBeUndefined();
        return;
      }
      const timeline = Number((await marker())!.acquired_at);
      expect(timeline).toBeGreaterThanOrEqual(1);

      // As if the table had last been written on the timeline before a promotion.
      await ctx.sql.execute(
        statement(`UPDATE ${ctx.prefix}simba_mutex SET acquired_at = 0 WHERE mutex = '${TIMELINE_MARKER}'`),
      );
      const tokenBefore = service.fencingToken!;
      await waitUntil(() => contender.count('released') === 1, 20_000, 'the owner to lose the mutex');
      const [row] = await ctx.sql.query<{ owner_id: string; transition_at: unknown; now_ms: unknown }>(
        statement(
          `SELECT owner_id, transition_at, CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT) AS now_ms FROM ${ctx.prefix}simba_mutex WHERE mutex = $1`,
          [contender.mutex],
        ),
      );
      const heldFor = Number(row.transition_at) - Number(row.now_ms);
      const reacquired = contender.count('acquired');
      expect(Number((await marker())!.acquired_at)).toBe(timeline); // back on the server's timeline
      expect({ owner: row.owner_id.trim(), held: heldFor > 0 }).toEqual({ owner: '', held: true });
      expect(reacquired).toBe(1); // nobody, this instance included, owns during the grace
      await waitUntil(() => contender.count('acquired') === 2, 20_000, 'a grant after the grace');
      expect(contender.tokens()[1]).toBeGreaterThan(tokenBefore);
    } finally {
      await service.stop();
    }
  });
});
