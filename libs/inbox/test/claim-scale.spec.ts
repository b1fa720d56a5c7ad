import { SchemaManager, SqlClient, sqlClientFor, statement } from '@holdfast/core/kit';
import { createTestDataSource, describeEachDatabase } from '@holdfast/testing';
import { CorMessageStore } from '../src/internal';
import { fillBacklog, planProblems } from './backlog';
import { INBOX_TABLES } from '../src';

/** `N row lock(s)` of the transaction of connection `id` in SHOW ENGINE INNODB STATUS. */
async function rowLocksFromMonitor(sql: SqlClient, id: number): Promise<number | undefined> {
  const [status] = await sql.query<{ Status: string }>(statement('SHOW ENGINE INNODB STATUS'));
  const block = status.Status.split(/^---TRANSACTION /m).find((b) =>
    new RegExp(`(?:MariaDB|MySQL) thread id ${id}\\b`).test(b),
  );
  const count = block && /(\d+) row lock\(s\)/.exec(block);
  return count ? Number(count[1]) : undefined;
}

/**
 * The claim at table sizes beyond a handful of rows: it locks only the rows it takes, a second
 * worker still gets a full batch while one claim is open, and the plans the databases really
 * run walk the delivery-order index (no full scan, no sort of the table).
 */

/** The text and values of a statement sent to SqlClient.query/execute, as a Statement or as text and values. */
function sentStatement(args: unknown[]): { sql: string; params: readonly unknown[] } {
  const [first, second] = args;
  if (typeof first === 'string') return { sql: first, params: (second as readonly unknown[]) ?? [] };
  return first as { sql: string; params: readonly unknown[] };
}

describeEachDatabase(
  'inbox claim at scale',
  (ctx) => {
    let store: CorMessageStore;
    const table = () => `${ctx.prefix}COR_MESSAGE`;

    beforeAll(async () => {
      await new SchemaManager(ctx.sql).apply(INBOX_TABLES.message, ctx.prefix, 'create');
      store = new CorMessageStore(ctx.sql, ctx.prefix);
      await store.detectLayout();
    });
    beforeEach(async () => {
      await ctx.sql.execute(statement(`DELETE FROM ${table()}`));
    });

    if (ctx.db !== 'sqlite') {
      it.each([
        [100, 20],
        [20_000, 100],
      ])(
        'with a claim of a batch open on %i rows, a second worker still claims a full batch of %i',
        async (size, batch) => {
          await fillBacklog(ctx.sql, table(), size);
          const other = new CorMessageStore(ctx.sql, ctx.prefix);
          await other.detectLayout();
          let second: string[] = [];
          let locked: number | undefined;
          const first = await store.claims.claim(batch, undefined, 60_000, async (tx) => {
            if (ctx.db === 'mariadb') {
              const [row] = await tx.query<{ n: unknown; id: unknown }>(
                statement(
                  'SELECT CONNECTION_ID() AS id, (SELECT trx_rows_locked FROM information_schema.innodb_trx ' +
                    'WHERE trx_mysql_thread_id = CONNECTION_ID()) AS n',
                ),
              );
              // innodb_trx was seen empty on MariaDB 10.11 while transactions held locks: then
              // the InnoDB monitor's line for this connection gives the same count.
              locked = row.n == null ? await rowLocksFromMonitor(tx, Number(row.id)) : Number(row.n);
            }
            second = (await other.claims.claim(batch, undefined, 60_000)).rows.map((r) => r.id);
          });
          const firstIds = first.rows.map((r) => r.id);
          expect(firstIds).toHaveLength(batch);
          expect(second).toHaveLength(batch);
          expect(second.filter((id) => firstIds.includes(id))).toEqual([]);
          // Delivery order: the oldest rows first, in INSERTED order.
          expect(firstIds).toEqual([...firstIds].sort());
          if (ctx.db === 'mariadb') {
            // InnoDB counts the rows locked in the clustered index and in each secondary index
            // entry it changed; a claim that locked what it scanned would report the whole table.
            expect(locked).toBeGreaterThanOrEqual(batch);
            expect(locked).toBeLessThanOrEqual(2 * batch);
          }
        },
      );
    }

    if (ctx.db !== 'sqlite') {
      it('a claim whose client goes silent is ended by the server within the bound; its rows go to another', async () => {
        await fillBacklog(ctx.sql, table(), 20);
        // Core's bound on the client's transactions covers the claim.
        const boundedSql = sqlClientFor(ctx.dataSource, undefined, undefined, {
          idleInTransactionTimeout: 2_000,
        });
        const bounded = new CorMessageStore(boundedSql, ctx.prefix, 5);
        await bounded.detectLayout();
        let freedAfter = -1;
        let taken: string[] = [];
        // Inside the claim, holding all 20 rows, the client sends nothing; meanwhile another
        // node tries to claim them.
        const error = await bounded.claims
          .claim(20, undefined, 60_000, async () => {
            const silentAt = Date.now();
            while (Date.now() - silentAt < 10_000) {
              taken = (await store.claims.claim(20, undefined, 60_000)).rows.map((r) => r.id);
              if (taken.length) {
                freedAfter = Date.now() - silentAt;
                return;
              }
              await new Promise((resolve) => setTimeout(resolve, 100));
            }
          })
          .catch((e: Error) => e);
        // The server ended the silent transaction: its lease never committed…
        expect(error).toBeInstanceOf(Error);
        // …and the other node got all 20 rows about 2 s (whole seconds, rounded up) later.
        expect(taken).toHaveLength(20);
        expect(freedAfter).toBeGreaterThanOrEqual(1_000);
        expect(freedAfter).toBeLessThanOrEqual(2_000 + 3_000);
      });
    }

    it('claims and cleans through the indexes: no full scan and no sort of 100,000 rows', async () => {
      await fillBacklog(ctx.sql, table(), 100_000, { expired: 1_000 });
      const statements: { sql: string; params: readonly unknown[] }[] = [];
      const record = (original: (...args: unknown[]) => Promise<unknown>) =>
        function (this: SqlClient, ...args: unknown[]) {
          const statement = sentStatement(args);
          if (statement.sql.includes(table())) statements.push(statement);
          return original.apply(this, args);
        };
      const { query: originalQuery, execute: originalExecute } = SqlClient.prototype;
      const query = jest
        .spyOn(SqlClient.prototype, 'query')
        .mockImplementation(record(originalQuery as (...args: unknown[]) => Promise<unknown>) as never);
      const execute = jest
        .spyOn(SqlClient.prototype, 'execute')
        .mockImplementation(record(originalExecute as (...args: unknown[]) => Promise<unknown>) as never);
      try {
        const claimed = await store.claims.claim(100, undefined, 60_000);
        expect(claimed.rows).toHaveLength(100);
        const expired = await store.cleanup.expiredIds(5_000, undefined);
        expect(expired).toHaveLength(1_000);
        expect(await store.cleanup.deleteExpired(expired, undefined)).toBe(1_000);
      } finally {
        query.mockRestore();
        execute.mockRestore();
      }
      expect(statements.length).toBeGreaterThanOrEqual(3);
      for (const statement of statements) {
        expect({ sql: statement.sql, problems: await planProblems(ctx.sql, table(), statement) }).toEqual({
          sql: statement.sql,
          problems: [],
        });
      }
    }, 120_000);

    if (ctx.db === 'postgres') {
      it('claims through the indexes when the statistics predate the backlog: no full scan, no sort', async () => {
        // A queue filled since its last ANALYZE: the planner takes the table for nearly empty.
        // It then picked by a scan and a sort of the whole table, and updated through a hash
        // join over another scan (`ID IN (…)`).
        await ctx.sql.execute(statement(`ALTER TABLE ${table()} SET (autovacuum_enabled = false)`));
        try {
          await ctx.sql.execute(statement(`ANALYZE ${table()}`));
          await fillBacklog(ctx.sql, table(), 50_000, { analyze: false });
          const statements: { sql: string; params: readonly unknown[] }[] = [];
          const { query: original } = SqlClient.prototype;
          const query = jest.spyOn(SqlClient.prototype, 'query').mockImplementation(function (
            this: SqlClient,
            ...args: unknown[]
          ) {
            const statement = sentStatement(args);
            if (statement.sql.includes(table())) statements.push(statement);
            return (original as (...a: unknown[]) => Promise<unknown>).apply(this, args);
          } as never);
          try {
            expect((await store.claims.claim(100, undefined, 60_000)).rows).toHaveLength(100);
          } finally {
            query.mockRestore();
          }
          expect(statements).toHaveLength(1);
          const problems = await planProblems(ctx.sql, table(), statements[0]);
          expect(problems).toEqual([]);
        } finally {
          await ctx.sql.execute(statement(`ALTER TABLE ${table()} RESET (autovacuum_enabled)`));
          await ctx.sql.execute(statement(`ANALYZE ${table()}`));
        }
      }, 60_000);
    }

    if (ctx.db === 'postgres') {
      it('leases in place: a claimed row keeps its page (a HOT update, no new index entries)', async () => {
        const [options] = await ctx.sql.query<{ reloptions: string[] | null }>(
          statement('SELECT reloptions FROM pg_class WHERE oid = CAST($1 AS regclass)', [
            table().toLowerCase(),
          ]),
        );
        expect(options.reloptions).toEqual(['fillfactor=50']);
        await fillBacklog(ctx.sql, table(), 2_000);
        const pages = async () =>
          new Map(
            (
              await ctx.sql.query<{ id: string; page: string }>(
                statement(
                  `SELECT ID AS id, split_part(trim(both '()' from ctid::text), ',', 1) AS page FROM ${table()}`,
                ),
              )
            ).map((r) => [r.id, r.page]),
          );
        const before = await pages();
        const { rows } = await store.claims.claim(500, undefined, 60_000);
        expect(rows).toHaveLength(500);
        const after = await pages();
        const kept = rows.filter((r) => after.get(r.id) === before.get(r.id)).length;
        // Rows of a page all leased at once may not all fit beside their old versions (the
        // sizes vary a little); with full pages none would.
        expect(kept).toBeGreaterThanOrEqual(450);
      });
    }

    if (ctx.db === 'sqlite') {
      it('does not hold the write lock while a handler runs', async () => {
        await fillBacklog(ctx.sql, table(), 10);
        const file = (ctx.dataSource.options as { database: string }).database;
        // Another process's connection, with a short busy timeout: it fails if the lock is held.
        const other = await createTestDataSource('sqlite', { sqliteFile: file });
        (
          other.driver as unknown as { databaseConnection: { pragma(s: string): void } }
        ).databaseConnection.pragma('busy_timeout = 200');
        try {
          const { rows } = await store.claims.claim(5, undefined, 60_000);
          expect(rows).toHaveLength(5);
          // The handler's turn: the claim is over, another writer goes through at once.
          const otherSql = sqlClientFor(other);
          await otherSql.transaction((tx) =>
            tx.execute(statement(`DELETE FROM ${table()} WHERE ID = ?`, [rows[0].id])),
          );
          expect(
            await otherSql.query(statement(`SELECT ID FROM ${table()} WHERE ID = ?`, [rows[0].id])),
          ).toEqual([]);
        } finally {
          await other.destroy();
        }
      });
    }
  },
  { tables: ['COR_MESSAGE'] },
);
