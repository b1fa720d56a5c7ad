import { createHash } from 'node:crypto';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { SchemaLockTimeoutError, SchemaManager, sqlClientFor, type TableSpec } from '@holdfast/core/kit';
import { createTestDataSource, describeEachDatabase, testDataSourceOptions } from '@holdfast/testing';

const SPEC: TableSpec = {
  name: 'CORE_LOCKED',
  columns: [{ name: 'ID', type: { kind: 'varchar', length: 64 } }],
  primaryKey: ['ID'],
};

/**
 * The schema step waits for another instance's schema step, within a bound, then fails with a
 * clear error naming the lock. The lock names are part of the operations contract.
 */
describeEachDatabase(
  'SchemaManager schema lock',
  (ctx) => {
    it('waits at most lockTimeoutMs for a held schema lock, then names it', async () => {
      const table = `${ctx.prefix}CORE_LOCKED`;
      const key = `holdfast:schema:${table.toLowerCase()}`;
      // A second connection (a second DataSource on SQLite) holds the lock while we apply.
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
              await c.query(`SELECT GET_LOCK(${name}, 5) AS got`, [key]);
              locked();
              await released;
              await c.query(`SELECT RELEASE_LOCK(${name})`, [key]);
            })
          : holder.transaction(async (tx) => {
              if (ctx.db === 'postgres') {
                const id = createHash('sha256').update(key).digest().readBigInt64BE(0).toString();
                await tx.query('SELECT pg_advisory_xact_lock(CAST($1 AS BIGINT))', [id]);
              }
              locked();
              await released;
            });
      try {
        await isLocked;
        // On SQLite the wait is the DataSource's busy timeout: a second DataSource with 1 s.
        const blocked =
          ctx.db === 'sqlite'
            ? await new DataSource({
                ...testDataSourceOptions('sqlite', { sqliteFile: ctx.dataSource.options.database as string }),
                timeout: 1_000,
              } as DataSourceOptions).initialize()
            : ctx.dataSource;
        const error = await new SchemaManager(sqlClientFor(blocked), { lockTimeoutMs: 1_000 })
          .apply(SPEC, ctx.prefix, 'create')
          .catch((e: unknown) => e);
        if (blocked !== ctx.dataSource) await blocked.destroy();
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
        release();
        await holding;
        await other.destroy();
      }
      // Once the other step is done, the schema step goes through.
      const live = await new SchemaManager(ctx.sql).apply(SPEC, ctx.prefix, 'create');
      expect(live.has('ID')).toBe(true);
    });
  },
  { tables: ['CORE_LOCKED'] },
);
