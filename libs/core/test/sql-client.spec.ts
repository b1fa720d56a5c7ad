import { SchemaManager, SchemaMissingError, type TableSpec } from '@holdfast/core';
import { describeEachDatabase } from '@holdfast/core/testing';

const THING: TableSpec = {
  name: 'CORE_THING',
  columns: [
    { name: 'ID', type: { kind: 'varchar', length: 64 } },
    { name: 'AT', type: { kind: 'timestamp' } },
    { name: 'N', type: { kind: 'bigint' } },
  ],
  primaryKey: ['ID'],
  indexes: [{ name: 'CORE_THING_AT_IDX', columns: ['AT'] }],
};

describeEachDatabase(
  'SqlClient and SchemaManager',
  (ctx) => {
    const t = () => `${ctx.prefix}CORE_THING`;
    const p = (i: number) => ctx.sql.dialect.placeholder(i);

    it('refuses a missing table in check mode, with the DDL to run', async () => {
      const err = await new SchemaManager(ctx.sql).apply(THING, ctx.prefix, 'check').catch((e) => e);
      expect(err).toBeInstanceOf(SchemaMissingError);
      expect(err.message).toContain(`CREATE TABLE ${t()}`);
      expect(err.message).toContain('CREATE INDEX');
    });

    it('creates the table and index once, and is idempotent', async () => {
      const schema = new SchemaManager(ctx.sql);
      await schema.apply(THING, ctx.prefix, 'create');
      await schema.apply(THING, ctx.prefix, 'create');
      await schema.apply(THING, ctx.prefix, 'check');
      expect(await schema.tableExists(t())).toBe(true);
      expect(await schema.indexExists(t(), `${ctx.prefix}CORE_THING_AT_IDX`, ['AT'])).toBe(true);
    });

    it('reads the database clock in epoch ms, within a few seconds of the app clock', async () => {
      const before = Date.now();
      const now = await ctx.sql.nowMillis();
      expect(Number.isInteger(now)).toBe(true);
      expect(Math.abs(now - before)).toBeLessThan(5_000);
    });

    it('round-trips timestamps to the millisecond and counts affected rows', async () => {
      const at = new Date('2026-03-04T05:06:07.089Z');
      const d = ctx.sql.dialect;
      await ctx.sql.execute(d.upsert({ table: t(), columns: ['ID', 'AT', 'N'], keys: ['ID'] }), [
        'a',
        d.timestampParam(at),
        '9007199254740991',
      ]);
      const [row] = await ctx.sql.query<{ at: unknown; n: unknown }>(
        `SELECT AT AS at, N AS n FROM ${t()} WHERE ID = ${p(1)}`,
        ['a'],
      );
      expect(d.readTimestamp(row.at).toISOString()).toBe(at.toISOString());
      expect(String(row.n)).toBe('9007199254740991');
      expect(await ctx.sql.execute(`UPDATE ${t()} SET N = ${p(1)} WHERE ID = ${p(2)}`, [1, 'a'])).toBe(1);
      expect(await ctx.sql.execute(`UPDATE ${t()} SET N = ${p(1)} WHERE ID = ${p(2)}`, [1, 'nope'])).toBe(0);
    });

    it('rolls a failed transaction back, and serializes concurrent ones', async () => {
      const d = ctx.sql.dialect;
      const insert = `INSERT INTO ${t()} (ID, AT, N) VALUES (${d.placeholders(3)})`;
      await expect(
        ctx.sql.transaction(async (tx) => {
          await tx.execute(insert, ['rolled-back', d.timestampParam(new Date()), 1]);
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await ctx.sql.query(`SELECT ID FROM ${t()} WHERE ID = ${p(1)}`, ['rolled-back'])).toHaveLength(
        0,
      );

      await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          ctx.sql.transaction(async (tx) => {
            await tx.execute(insert, [`tx-${i}`, d.timestampParam(new Date()), i]);
            await tx.query(`SELECT COUNT(*) AS c FROM ${t()}`);
          }),
        ),
      );
      const rows = await ctx.sql.query(`SELECT ID FROM ${t()} WHERE ID LIKE 'tx-%'`);
      expect(rows).toHaveLength(8);
    });
  },
  { tables: ['CORE_THING'] },
);
