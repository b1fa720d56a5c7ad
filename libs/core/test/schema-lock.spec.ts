import { createHash } from 'node:crypto';
import { DataSource, type DataSourceOptions } from 'typeorm';
import {
  SchemaLockTimeoutError,
  SchemaManager,
  sqlClientFor,
  type TableSpec,
  statement,
} from '@holdfast/core/kit';
import { createTestDataSource, describeEachDatabase, testDataSourceOptions } from '@holdfast/testing';

const SPEC: TableSpec = {
  name: 'CORE_LOCKED',
  columns: [{ name: 'ID', type: { kind: 'varchar', length: 64 } }],
  primaryKey: ['ID'],
};

const INDEXED: TableSpec = {
  name: 'CORE_INDEXED',
  columns: [
    { name: 'ID', type: { kind: 'varchar', length: 64 } },
    { name: 'OWNER', type: { kind: 'varchar', length: 64 }, nullable: true },
  ],
  primaryKey: ['ID'],
  indexes: [{ name: 'CORE_IDX_OWNER', columns: ['OWNER'] }],
};

/**
 * The schema step waits for another instance's schema step, within a bound, then fails with a
 * clear error naming the lock. The lock names are part of the operations contract.
 */
type Ctx = Parameters<Parameters<typeof describeEachDatabase>[1]>[0];

/** Another connection (a second DataSource on SQLite) holds `table`'s schema lock until `release`. */
async function holdSchemaLock(ctx: Ctx, table: string): Promise<{ release: () => Promise<void> }> {
  const key = `holdfast:schema:${table.toLowerCase()}`;
  const other = await createTestDataSource(ctx.db, {
    sqliteFile: ctx.db === 'sqlite' ? (ctx.dataSource.options.database as string) : undefined,
  });
  const holder = sqlClientFor(other);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const holding =
    ctx.db === 'mariadb'
      ? holder.session(async (c) => {
          const name = `LEFT(CONCAT('holdfast:schema:', SHA1(CONCAT(COALESCE(DATABASE(), ''), '.', ?))), 64)`;
          await c.query(statement(`SELECT GET_LOCK(${name}, 5) AS got`, [key]));
          locked();
          await released;
          await c.query(statement(`SELECT RELEASE_LOCK(${name})`, [key]));
        })
      : holder.transaction(async (tx) => {
          if (ctx.db === 'postgres') {
            const id = createHash('sha256').update(key).digest().readBigInt64BE(0).toString();
            await tx.query(statement('SELECT pg_advisory_xact_lock(CAST($1 AS BIGINT))', [id]));
          }
          locked();
          await released;
        });
  await isLocked;
  return {
    release: async () => {
      release();
      await holding;
      await other.destroy();
    },
  };
}

/** A SchemaManager whose lock waits last 1 s (on SQLite, the busy timeout of its own DataSource). */
async function impatientManager(ctx: Ctx): Promise<{ manager: SchemaManager; close: () => Promise<void> }> {
  const blocked =
    ctx.db === 'sqlite'
      ? await new DataSource({
          ...testDataSourceOptions('sqlite', { sqliteFile: ctx.dataSource.options.database as string }),
          timeout: 1_000,
        } as DataSourceOptions).initialize()
      : ctx.dataSource;
  return {
    manager: new SchemaManager(sqlClientFor(blocked), { lockTimeoutMs: 1_000 }),
    close: async () => {
      if (blocked !== ctx.dataSource) await blocked.destroy();
    },
  };
}

/**
 * The schema step waits for another instance's schema step, within a bound, then fails with a
 * clear error naming the lock. The lock names are part of the operations contract. A table
 * already in place is checked without the lock.
 */
describeEachDatabase(
  'SchemaManager schema lock',
  (ctx) => {
    it('waits at most lockTimeoutMs for a held schema lock, then names it', async () => {
      const table = `${ctx.prefix}CORE_LOCKED`;
      const lock = await holdSchemaLock(ctx, table);
      try {
        const { manager, close } = await impatientManager(ctx);
        const error = await manager.apply(SPEC, ctx.prefix, 'create').catch((e: unknown) => e);
        await close();
        expect(error).toBeInstanceOf(SchemaLockTimeoutError);
        expect((error as SchemaLockTimeoutError).code).toBe('HOLDFAST_CORE_SCHEMA_LOCK_TIMEOUT');
        expect((error as Error).message).toContain(
          `Timed out after 1000 ms waiting for the schema lock of ${table}`,
        );
        expect((error as Error).message).toMatch(
          {
            postgres: /PostgreSQL advisory lock -?\d+/,
            mariadb: /GET_LOCK\('holdfast:schema:[0-9a-f]{40}'\)/,
            sqlite: /SQLite write lock/,
          }[ctx.db],
        );
      } finally {
        await lock.release();
      }
      // Once the other step is done, the schema step goes through.
      const live = await new SchemaManager(ctx.sql).apply(SPEC, ctx.prefix, 'create');
      expect(live.has('ID')).toBe(true);
    });

    // No network on SQLite, so no client bound to outlast.
    if (ctx.db !== 'sqlite')
      it("waits out another instance's schema step beyond its client's own statementTimeout", async () => {
        const table = `${ctx.prefix}CORE_LOCKED_BOUNDED`;
        const spec = { ...SPEC, name: 'CORE_LOCKED_BOUNDED' };
        const lock = await holdSchemaLock(ctx, table);
        // A module's client bounds its waits far below the schema lock's (Simba: a third of its transition).
        const bounded = sqlClientFor(ctx.dataSource, undefined, undefined, { statementTimeout: 300 });
        const applying = new SchemaManager(bounded, { lockTimeoutMs: 10_000 }).apply(
          spec,
          ctx.prefix,
          'create',
        );
        const outcome = applying.then(
          () => 'applied',
          (e: unknown) => e,
        );
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        await lock.release();
        expect(await outcome).toBe('applied');
      });

    it('checks a table and indexes already in place without the lock, and waits for it when an index is missing', async () => {
      const table = `${ctx.prefix}CORE_INDEXED`;
      await new SchemaManager(ctx.sql).apply(INDEXED, ctx.prefix, 'create');
      const lock = await holdSchemaLock(ctx, table);
      const { manager, close } = await impatientManager(ctx);
      try {
        for (const mode of ['create', 'check'] as const) {
          const live = await manager.apply(INDEXED, ctx.prefix, mode);
          expect(live.has('OWNER')).toBe(true);
        }
      } finally {
        await close();
        await lock.release();
      }
      // Without its index the table is not in place: the step takes the lock (and creates it).
      await ctx.sql.execute(
        statement(
          `DROP INDEX ${ctx.db === 'mariadb' ? `${ctx.prefix}CORE_IDX_OWNER ON ${table}` : `${ctx.prefix}CORE_IDX_OWNER`}`,
        ),
      );
      const held = await holdSchemaLock(ctx, table);
      const waiting = await impatientManager(ctx);
      try {
        const error = await waiting.manager.apply(INDEXED, ctx.prefix, 'create').catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SchemaLockTimeoutError);
      } finally {
        await waiting.close();
        await held.release();
      }
      await new SchemaManager(ctx.sql).apply(INDEXED, ctx.prefix, 'create');
      expect(
        await new SchemaManager(ctx.sql).indexExists(table, `${ctx.prefix}CORE_IDX_OWNER`, ['OWNER']),
      ).toBe(true);
    });
  },
  { tables: ['CORE_LOCKED', 'CORE_LOCKED_BOUNDED', 'CORE_INDEXED'] },
);
