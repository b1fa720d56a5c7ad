import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { sqlClientFor, type SqlClient, statement } from '@holdfast/core/kit';
import { createTestDataSource, testDatabases } from '@holdfast/testing';

/**
 * `prepared: true` on SqlClient.query/execute: PostgreSQL keeps the statement named (planned)
 * per pooled connection; a connection that lost it (what PgBouncer in transaction mode does,
 * played here by DEALLOCATE ALL behind the driver's back) costs one retry unnamed, one warning,
 * and named statements stop for the pool. Other databases take the option and ignore it.
 */
/** The PgBouncer step of CI (test/pgbouncer/run.sh): each statement may land on another server session. */
const behindBouncer = process.env.HOLDFAST_TEST_PG_DIRECT_URL !== undefined;

const SELECT_ONE = (sql: SqlClient) =>
  sql.dialect.name === 'postgres' ? 'SELECT CAST($1 AS INTEGER) + 1 AS n' : `SELECT ? + 1 AS n`;

describe.each(testDatabases())('prepared statements on %s', (db) => {
  let dataSource: DataSource;
  // One pooled connection: every statement here runs on the same server session.
  beforeEach(async () => {
    dataSource = await createTestDataSource(db, { poolSize: 1 });
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await dataSource.destroy();
  });

  const named = async (sql: SqlClient) =>
    (
      await sql.query<{ name: string; statement: string }>(
        statement('SELECT name, statement FROM pg_prepared_statements'),
      )
    ).map((row) => row.name);

  for (const statementTimeout of [0, 10_000]) {
    const bounded = statementTimeout ? 'with a statementTimeout' : 'unbounded';

    it(`answers as an unprepared statement does (${bounded})`, async () => {
      const sql = sqlClientFor(dataSource, undefined, undefined, { statementTimeout });
      for (let i = 0; i < 3; i++) {
        const [row] = await sql.query<{ n: unknown }>(statement(SELECT_ONE(sql), [i]), { prepared: true });
        expect(Number(row.n)).toBe(i + 1);
      }
      if (db !== 'postgres' || behindBouncer) return;
      const names = await named(sql);
      expect(names).toHaveLength(1);
      expect(names[0]).toMatch(/^hf_[0-9a-f]{32}$/);
    });

    if (db !== 'postgres' || behindBouncer) continue;

    it(`a connection that lost its statement: one retry unnamed, one warning, then no more names (${bounded})`, async () => {
      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const sql = sqlClientFor(dataSource, undefined, undefined, { statementTimeout });
      expect(
        Number((await sql.query<{ n: unknown }>(statement(SELECT_ONE(sql), [1]), { prepared: true }))[0].n),
      ).toBe(2);
      // The driver still believes the statement is parsed on this connection; the server forgot it.
      await sql.execute(statement('DEALLOCATE ALL'));
      expect(
        Number((await sql.query<{ n: unknown }>(statement(SELECT_ONE(sql), [2]), { prepared: true }))[0].n),
      ).toBe(3);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0][0])).toContain('26000');
      expect(
        Number((await sql.query<{ n: unknown }>(statement(SELECT_ONE(sql), [3]), { prepared: true }))[0].n),
      ).toBe(4);
      expect(await named(sql)).toEqual([]);
      expect(warn).toHaveBeenCalledTimes(1);
    });
  }

  if (db === 'postgres' && behindBouncer)
    it('behind PgBouncer in transaction mode: every answer right, named statements given up at most once', async () => {
      await dataSource.destroy();
      dataSource = await createTestDataSource(db, { poolSize: 4 });
      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const sql = sqlClientFor(dataSource);
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          sql
            .query<{ n: unknown }>(statement(SELECT_ONE(sql), [i]), { prepared: true })
            .then(([row]) => Number(row.n)),
        ),
      );
      expect(answers).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
      expect(warn.mock.calls.length).toBeLessThanOrEqual(1);
    });

  if (db === 'postgres' && !behindBouncer)
    it('an error of the statement itself is not taken for a lost statement', async () => {
      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const sql = sqlClientFor(dataSource);
      await expect(
        sql.query(statement('SELECT 1 / CAST($1 AS INTEGER) AS n', [0]), { prepared: true }),
      ).rejects.toMatchObject({
        code: '22012',
      });
      expect(warn).not.toHaveBeenCalled();
      expect(
        Number(
          (
            await sql.query<{ n: unknown }>(statement('SELECT 1 / CAST($1 AS INTEGER) AS n', [1]), {
              prepared: true,
            })
          )[0].n,
        ),
      ).toBe(1);
      expect(await named(sql)).toHaveLength(1);
    });
});
