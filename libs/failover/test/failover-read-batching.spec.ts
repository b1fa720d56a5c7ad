import { describeEachDatabase } from '@holdfast/testing';
import { FailoverStoreQueryResolver, type FailoverQueryContext } from '@holdfast/failover';
import { SqlFailoverStore, failoverKey } from '@holdfast/failover/internal';
import type { Statement } from '@holdfast/core/kit';

const hour = 3_600_000;

/** A resolver that replaces the point read only (an application tuning `find` for its database). */
class OwnFind extends FailoverStoreQueryResolver {
  override find(ctx: FailoverQueryContext, name: string, key: string): Statement {
    return super.find(ctx, name, key);
  }
}

/** The SQL text of what SqlClient.query was given: a Statement, or text. */
const textOf = (first: unknown): string =>
  typeof first === 'string' ? first : (first as { sql: string }).sql;

describeEachDatabase(
  'SqlFailoverStore point reads under load',
  (ctx) => {
    let store: SqlFailoverStore;
    const keys = Array.from({ length: 40 }, (_, i) => failoverKey('batch', `k${i}`));

    /** The statements the store sends on its client from now on. */
    const countStatements = () => {
      const sent: string[] = [];
      const query = ctx.sql.query.bind(ctx.sql);
      jest.spyOn(ctx.sql, 'query').mockImplementation(((...args: Parameters<typeof query>) => {
        sent.push(textOf(args[0]));
        return (query as (...a: unknown[]) => Promise<unknown>)(...args);
      }) as never);
      // SQLite answers a free connection's reads without a statement through `query`: the reads
      // below go through it only while a transaction holds the connection.
      jest.spyOn(ctx.sql, 'runsSynchronously', 'get').mockReturnValue(false);
      return sent;
    };

    beforeEach(async () => {
      store = await new SqlFailoverStore({ sql: ctx.sql, tablePrefix: ctx.prefix, schema: 'create' }).init();
      const asOf = new Date();
      // Every other key is stored; the rest are missing.
      for (let i = 0; i < keys.length; i += 2)
        await store.store({
          name: 'batch',
          key: keys[i],
          asOf,
          expireOn: new Date(asOf.getTime() + hour),
          payload: { i },
        });
    });

    afterEach(() => jest.restoreAllMocks());

    it('reads keys that wait behind four reads in flight together, each caller getting its own entry', async () => {
      const sent = countStatements();
      // The 40 calls go out in one synchronous loop, so the four in flight cannot have answered:
      // the monotonic clock is held still meanwhile, so that a busy machine descheduling this
      // process for longer than the stall bound (50 ms) does not send the waiting reads one by one.
      const now = performance.now();
      const held = jest.spyOn(performance, 'now').mockReturnValue(now);
      const calls = keys.map((key) => store.find<{ i: number }>('batch', key));
      held.mockRestore();
      const found = await Promise.all(calls);
      found.forEach((entry, i) => {
        if (i % 2) expect(entry).toBeUndefined();
        else expect(entry).toMatchObject({ name: 'batch', key: keys[i], payload: { i } });
      });
      // Four reads of one key, then the 36 that waited in reads of at most 32 keys: one statement
      // per key before (40).
      const reads = sent.filter((s) => s.includes(store.tableName));
      expect(reads).toHaveLength(4 + 2);
    });

    it('keeps reads waiting behind four in flight after a turn of the event loop longer than the stall bound', async () => {
      const sent = countStatements();
      const first = keys.slice(0, 4).map((key) => store.find<{ i: number }>('batch', key));
      // The turn goes on for three times the stall bound (50 ms) while the four are answered: their
      // answers wait on the sockets, unread. Taking them for stalled sent each later read alone.
      const until = performance.now() + 150;
      while (performance.now() < until);
      const rest = keys.slice(4).map((key) => store.find<{ i: number }>('batch', key));
      const found = await Promise.all([...first, ...rest]);
      found.forEach((entry, i) => {
        if (i % 2) expect(entry).toBeUndefined();
        else expect(entry).toMatchObject({ name: 'batch', key: keys[i], payload: { i } });
      });
      expect(sent.filter((s) => s.includes(store.tableName))).toHaveLength(4 + 2);
    });

    it('answers side-by-side reads at once, one key each, where the connection answers synchronously (SQLite)', async () => {
      // A free SQLite connection answers a point read in the caller's turn: nothing waits for a
      // read of many keys (holding reads back to the next turn cost a quiet machine's recovery a
      // fifth of its rate: docs/benchmarks.md). The servers' reads go out asynchronously (above).
      const sent: string[] = [];
      const query = ctx.sql.query.bind(ctx.sql);
      jest.spyOn(ctx.sql, 'query').mockImplementation(((...args: Parameters<typeof query>) => {
        sent.push(textOf(args[0]));
        return (query as (...a: unknown[]) => Promise<unknown>)(...args);
      }) as never);
      const found = await Promise.all(keys.map((key) => store.find<{ i: number }>('batch', key)));
      found.forEach((entry, i) => {
        if (i % 2) expect(entry).toBeUndefined();
        else expect(entry).toMatchObject({ name: 'batch', key: keys[i], payload: { i } });
      });
      const many = sent.filter((s) => s.includes(store.tableName) && s.includes('FAILOVER_KEY IN'));
      if (ctx.sql.runsSynchronously) expect(sent.filter((s) => s.includes(store.tableName))).toHaveLength(0);
      else expect(many).toHaveLength(2);
    });

    it('reads one key at a time when the application replaces find but not findMany', async () => {
      store = await new SqlFailoverStore({
        sql: ctx.sql,
        tablePrefix: ctx.prefix,
        schema: 'check',
        rows: { queries: new OwnFind() },
      }).init();
      const sent = countStatements();
      const found = await Promise.all(keys.map((key) => store.find<{ i: number }>('batch', key)));
      expect(found.filter(Boolean)).toHaveLength(keys.length / 2);
      expect(sent.filter((s) => s.includes(store.tableName))).toHaveLength(keys.length);
    });

    it('lets no read wait behind four reads that never answer (connections gone silent)', async () => {
      countStatements();
      const query = ctx.sql.query as jest.Mock;
      const real = query.getMockImplementation()!;
      let silent = 4;
      query.mockImplementation((...args: unknown[]) =>
        silent-- > 0 ? new Promise(() => undefined) : real(...args),
      );
      const hung = keys.slice(0, 4).map((key) => store.find('batch', key));
      // Queued behind them while they have just been sent, then read once they are seen stalled.
      const queued = store.find<{ i: number }>('batch', keys[4]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const later = store.find<{ i: number }>('batch', keys[6]);
      expect(await queued).toMatchObject({ payload: { i: 4 } });
      expect(await later).toMatchObject({ payload: { i: 6 } });
      void hung;
    });

    it('gives every caller of a read of many keys that fails its error, and reads again afterwards', async () => {
      const sent = countStatements();
      const query = ctx.sql.query as jest.Mock;
      const real = query.getMockImplementation()!;
      query.mockImplementation((...args: unknown[]) =>
        / IN \(/.test(textOf(args[0])) ? Promise.reject(new Error('server gone')) : real(...args),
      );
      const outcomes = await Promise.allSettled(keys.slice(0, 10).map((key) => store.find('batch', key)));
      expect(outcomes.slice(0, 4).every((o) => o.status === 'fulfilled')).toBe(true);
      for (const o of outcomes.slice(4))
        expect(o).toMatchObject({ status: 'rejected', reason: { message: 'server gone' } });
      query.mockImplementation(real);
      sent.length = 0;
      expect(await store.find('batch', keys[8])).toMatchObject({ payload: { i: 8 } });
      expect(sent).toHaveLength(1);
    });
  },
  { tables: ['FAILOVER_STORE'] },
);
