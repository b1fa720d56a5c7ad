import { DataSource, type DataSourceOptions } from 'typeorm';
import {
  sqlClientFor,
  withTransientRetry,
  type SqlClient,
  type TransientRetry,
  statement,
} from '@holdfast/core/kit';
import { isTransientConflictError } from '../src/database/sql-errors';
import { describeEachDatabase, testDataSourceOptions } from '@holdfast/testing';

/** Resolves when `count` parties have arrived. */
function barrier(count: number): { arrive: () => Promise<void> } {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return {
    arrive: () => {
      if (++arrived >= count) open();
      return opened;
    },
  };
}

/**
 * Real conflicts, induced on the database: two transactions that lock two rows in opposite
 * order (a deadlock), a repeatable-read update of a row changed meanwhile (40001), a lock wait
 * that times out (MariaDB 1205), SQLite busy. Each is retried and reported; none reaches the caller.
 */
describeEachDatabase(
  'withTransientRetry on real conflicts',
  (ctx) => {
    const t = () => `${ctx.prefix}CORE_RETRY`;
    const p = (i: number) => ctx.sql.dialect.placeholder(i);
    const value = async (id: string) =>
      Number(
        (
          await ctx.sql.query<{ n: unknown }>(statement(`SELECT N AS n FROM ${t()} WHERE ID = ${p(1)}`, [id]))
        )[0].n,
      );

    beforeAll(async () => {
      await ctx.sql.execute(
        statement(`CREATE TABLE ${t()} (ID VARCHAR(8) NOT NULL PRIMARY KEY, N INT NOT NULL)`),
      );
      for (const id of ['a', 'b', 'c', 'd']) {
        await ctx.sql.execute(statement(`INSERT INTO ${t()} (ID, N) VALUES (${p(1)}, 0)`, [id]));
      }
    });

    /** Locks `first`, waits until the other transaction has locked its first row, then locks `second`. */
    const crossing = (sql: SqlClient, first: string, second: string, meet: { arrive: () => Promise<void> }) =>
      sql.transaction(async (tx) => {
        await tx.execute(statement(`UPDATE ${t()} SET N = N + 1 WHERE ID = ${p(1)}`, [first]));
        await meet.arrive();
        await tx.execute(statement(`UPDATE ${t()} SET N = N + 1 WHERE ID = ${p(1)}`, [second]));
      });

    if (ctx.db !== 'sqlite') {
      it('a deadlock between two transactions reaches the caller without a retry', async () => {
        const meet = barrier(2);
        const results = await Promise.allSettled([
          crossing(ctx.sql, 'a', 'b', meet),
          crossing(ctx.sql, 'b', 'a', meet),
        ]);
        const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        expect(failed).toHaveLength(1);
        expect(isTransientConflictError(failed[0].reason)).toBe(true);
      });

      it('retries the deadlock victim, reports the retry, and both transactions take effect', async () => {
        const before = [await value('a'), await value('b')];
        const meet = barrier(2);
        const retries: TransientRetry[] = [];
        const onRetry = (r: TransientRetry) => retries.push(r);
        await Promise.all([
          withTransientRetry(() => crossing(ctx.sql, 'a', 'b', meet), { operation: 'ab', onRetry }),
          withTransientRetry(() => crossing(ctx.sql, 'b', 'a', meet), { operation: 'ba', onRetry }),
        ]);
        expect(retries).toHaveLength(1);
        expect(retries[0]).toMatchObject({
          attempt: 1,
          code: ctx.db === 'postgres' ? '40P01' : 'ER_LOCK_DEADLOCK',
        });
        expect(['ab', 'ba']).toContain(retries[0].operation);
        expect([await value('a'), await value('b')]).toEqual(before.map((n) => n + 2));
      });
    }

    if (ctx.db === 'postgres') {
      it('retries a serialization failure (40001) of a repeatable-read transaction', async () => {
        const retries: TransientRetry[] = [];
        let tries = 0;
        await withTransientRetry(
          () =>
            ctx.sql.transaction(async (tx) => {
              tries++;
              await tx.query(statement('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ'));
              await tx.query(statement(`SELECT N FROM ${t()} WHERE ID = $1`, ['c']));
              // Someone else changes the row after our snapshot, the first time only.
              if (tries === 1)
                await ctx.sql.execute(statement(`UPDATE ${t()} SET N = N + 10 WHERE ID = $1`, ['c']));
              await tx.execute(statement(`UPDATE ${t()} SET N = N + 1 WHERE ID = $1`, ['c']));
            }),
          { onRetry: (r) => retries.push(r) },
        );
        expect(retries.map((r) => r.code)).toEqual(['40001']);
        expect(await value('c')).toBe(11);
      });
    }

    if (ctx.db === 'mariadb') {
      it('retries a lock wait timeout (1205) once the holder commits', async () => {
        // A pool of one connection whose lock wait is 1 s (session setting, this pool only).
        const short = await new DataSource({
          ...testDataSourceOptions('mariadb', { poolSize: 1 }),
        } as DataSourceOptions).initialize();
        try {
          await short.query('SET SESSION innodb_lock_wait_timeout = 1');
          const blocked = sqlClientFor(short);
          let release!: () => void;
          const released = new Promise<void>((resolve) => (release = resolve));
          let holding!: () => void;
          const held = new Promise<void>((resolve) => (holding = resolve));
          const holder = ctx.sql.transaction(async (tx) => {
            await tx.execute(statement(`UPDATE ${t()} SET N = N + 1 WHERE ID = ?`, ['d']));
            holding();
            await released;
          });
          await held;
          const retries: TransientRetry[] = [];
          await withTransientRetry(
            () => blocked.execute(statement(`UPDATE ${t()} SET N = N + 1 WHERE ID = ?`, ['d'])),
            {
              onRetry: (r) => {
                retries.push(r);
                release();
              },
            },
          );
          await holder;
          // The retry may come before the holder commits: one retry or a few, never a failure.
          expect(retries.length).toBeGreaterThanOrEqual(1);
          expect(new Set(retries.map((r) => r.code))).toEqual(new Set(['ER_LOCK_WAIT_TIMEOUT']));
          expect(await value('d')).toBe(2);
        } finally {
          await short.destroy();
        }
      });
    }

    if (ctx.db === 'sqlite') {
      it('retries SQLITE_BUSY while another connection holds the write lock', async () => {
        const file = ctx.dataSource.options.database as string;
        const impatient = await new DataSource({
          ...testDataSourceOptions('sqlite', { sqliteFile: file }),
          timeout: 0,
        } as DataSourceOptions).initialize();
        const other = await new DataSource(
          testDataSourceOptions('sqlite', { sqliteFile: file }),
        ).initialize();
        try {
          let release!: () => void;
          const released = new Promise<void>((resolve) => (release = resolve));
          let holding!: () => void;
          const held = new Promise<void>((resolve) => (holding = resolve));
          const holder = sqlClientFor(other).transaction(async () => {
            holding();
            await released;
          });
          await held;
          const retries: TransientRetry[] = [];
          await withTransientRetry(
            () =>
              sqlClientFor(impatient).transaction((tx) =>
                tx.execute(statement(`UPDATE ${t()} SET N = N + 1 WHERE ID = ?`, ['d'])),
              ),
            {
              onRetry: (r) => {
                retries.push(r);
                release();
              },
            },
          );
          await holder;
          // The retry may come before the holder commits: one retry or a few, never a failure.
          expect(retries.length).toBeGreaterThanOrEqual(1);
          expect(new Set(retries.map((r) => r.code))).toEqual(new Set(['SQLITE_BUSY']));
          expect(await value('d')).toBe(1);
        } finally {
          await impatient.destroy();
          await other.destroy();
        }
      });
    }
  },
  { tables: ['CORE_RETRY'] },
);
