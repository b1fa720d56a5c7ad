import { DataSource, type DataSourceOptions } from 'typeorm';
import {
  InvalidOptionsError,
  sqlClientFor,
  type IsolationLevel,
  type SqlClient,
  statement,
} from '@holdfast/core/kit';
import { describeEachDatabase, testDataSourceOptions } from '@holdfast/testing';

/**
 * `SqlClient.transaction(work, { isolation })`: the level holds for that transaction only, on
 * every dialect, together with the server's idle bound.
 */
describeEachDatabase(
  'transaction isolation level',
  (ctx) => {
    const t = () => `${ctx.prefix}CORE_ISO`;

    beforeAll(async () => {
      await ctx.sql.execute(
        statement(`CREATE TABLE ${t()} (ID VARCHAR(8) NOT NULL PRIMARY KEY, N INT NOT NULL)`),
      );
      await ctx.sql.execute(statement(`INSERT INTO ${t()} (ID, N) VALUES ('a', 0)`));
    });

    it('rejects an unknown level with a typed error naming it, before touching the database', async () => {
      let ran = false;
      const error = await ctx.sql
        .transaction(
          async () => {
            ran = true;
          },
          { isolation: 'read uncommitted' as IsolationLevel },
        )
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidOptionsError);
      expect((error as Error).message).toContain(
        `isolation must be one of 'read committed', 'repeatable read', 'serializable', got "read uncommitted"`,
      );
      expect(ran).toBe(false);
    });

    if (ctx.db === 'sqlite') {
      it('runs the work (SQLite is always serializable, stronger than any level asked for)', async () => {
        const n = await ctx.sql.transaction(
          async (tx) => {
            await tx.execute(statement(`UPDATE ${t()} SET N = N + 1 WHERE ID = 'a'`));
            return (await tx.query<{ n: unknown }>(statement(`SELECT N AS n FROM ${t()} WHERE ID = 'a'`)))[0]
              .n;
          },
          { isolation: 'read committed' },
        );
        expect(Number(n)).toBe(1);
      });
      return;
    }
    const db = ctx.db;

    /** The level of the transaction `tx` is in, as the server shows it (lower case). */
    const levelOf = async (tx: SqlClient): Promise<string> => {
      if (db === 'postgres') {
        const [row] = await tx.query<{ v: unknown }>(
          statement(`SELECT current_setting('transaction_isolation') AS v`),
        );
        return String(row.v);
      }
      // InnoDB's information_schema.innodb_trx.trx_isolation_level can show the level of the
      // connection's previous transaction, and @@tx_isolation shows the session's: read what
      // the level does instead. SERIALIZABLE share-locks the rows a plain read returns...
      const read = async () =>
        Number((await tx.query<{ n: unknown }>(statement(`SELECT N AS n FROM ${t()} WHERE ID = 'a'`)))[0].n);
      const before = await read();
      const locked = await ctx.sql
        .query(statement(`SELECT N FROM ${t()} WHERE ID = 'a' FOR UPDATE NOWAIT`))
        .then(() => false)
        .catch(() => true);
      if (locked) return 'serializable';
      // ...READ COMMITTED sees what another connection committed meanwhile, REPEATABLE READ not.
      await ctx.sql.execute(statement(`UPDATE ${t()} SET N = N + 1 WHERE ID = 'a'`));
      return (await read()) === before ? 'repeatable read' : 'read committed';
    };

    it('runs the transaction at the level asked for, and the next one at the session level again', async () => {
      // One connection, so the transaction after looks at the very session the others used.
      const single = await new DataSource(
        testDataSourceOptions(db, { poolSize: 1 }) as DataSourceOptions,
      ).initialize();
      try {
        const sql = sqlClientFor(single, undefined, undefined, { idleInTransactionTimeout: '3s' });
        const sessionLevel = await sql.transaction(levelOf);
        for (const isolation of ['read committed', 'repeatable read', 'serializable'] as const) {
          expect(await sql.transaction(levelOf, { isolation })).toBe(isolation);
          expect(await sql.transaction(levelOf)).toBe(sessionLevel);
        }
        // The idle bound still holds inside a transaction with a level of its own.
        const bound = await sql.transaction(
          async (tx) =>
            String(
              (
                await tx.query<{ v: unknown }>(
                  statement(
                    db === 'postgres'
                      ? `SELECT current_setting('idle_in_transaction_session_timeout') AS v`
                      : 'SELECT @@SESSION.idle_transaction_timeout AS v',
                  ),
                )
              )[0].v,
            ),
          { isolation: 'read committed' },
        );
        expect(bound).toBe(db === 'postgres' ? '3s' : '3');
      } finally {
        await single.destroy();
      }
    });

    it('read committed sees a row committed meanwhile; repeatable read does not', async () => {
      const readTwice = (isolation: IsolationLevel) =>
        ctx.sql.transaction(
          async (tx) => {
            const read = async () =>
              Number(
                (await tx.query<{ n: unknown }>(statement(`SELECT N AS n FROM ${t()} WHERE ID = 'a'`)))[0].n,
              );
            const before = await read();
            await ctx.sql.execute(statement(`UPDATE ${t()} SET N = N + 1 WHERE ID = 'a'`)); // another connection
            return (await read()) - before;
          },
          { isolation },
        );
      expect(await readTwice('read committed')).toBe(1);
      expect(await readTwice('repeatable read')).toBe(0);
    });
  },
  { tables: ['CORE_ISO'] },
);
