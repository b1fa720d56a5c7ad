import {
  SchemaManager,
  SchemaMissingError,
  TemplateBinder,
  toNumber,
  type TableSpec,
  statement,
} from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';

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
      await ctx.sql.execute(
        statement(d.upsert({ table: t(), columns: ['ID', 'AT', 'N'], keys: ['ID'] }), [
          'a',
          d.timestampParam(at),
          '9007199254740991',
        ]),
      );
      const [row] = await ctx.sql.query<{ at: unknown; n: unknown }>(
        statement(`SELECT AT AS at, N AS n FROM ${t()} WHERE ID = ${p(1)}`, ['a']),
      );
      expect(d.readTimestamp(row.at).toISOString()).toBe(at.toISOString());
      expect(String(row.n)).toBe('9007199254740991');
      expect(
        await ctx.sql.execute(statement(`UPDATE ${t()} SET N = ${p(1)} WHERE ID = ${p(2)}`, [1, 'a'])),
      ).toBe(1);
      expect(
        await ctx.sql.execute(statement(`UPDATE ${t()} SET N = ${p(1)} WHERE ID = ${p(2)}`, [1, 'nope'])),
      ).toBe(0);
    });

    it('rolls a failed transaction back, and serializes concurrent ones', async () => {
      const d = ctx.sql.dialect;
      const insert = `INSERT INTO ${t()} (ID, AT, N) VALUES (${d.placeholders(3)})`;
      await expect(
        ctx.sql.transaction(async (tx) => {
          await tx.execute(statement(insert, ['rolled-back', d.timestampParam(new Date()), 1]));
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(
        await ctx.sql.query(statement(`SELECT ID FROM ${t()} WHERE ID = ${p(1)}`, ['rolled-back'])),
      ).toHaveLength(0);

      await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          ctx.sql.transaction(async (tx) => {
            await tx.execute(statement(insert, [`tx-${i}`, d.timestampParam(new Date()), i]));
            await tx.query(statement(`SELECT COUNT(*) AS c FROM ${t()}`));
          }),
        ),
      );
      const rows = await ctx.sql.query(statement(`SELECT ID FROM ${t()} WHERE ID LIKE 'tx-%'`));
      expect(rows).toHaveLength(8);
    });

    it('answers a point read synchronously through a row reader on SQLite only, never inside a transaction', async () => {
      const d = ctx.sql.dialect;
      const b = new TemplateBinder<{ id: string }>(d);
      const reader = ctx.sql.rowReader(
        b.template(`SELECT N AS n, ID AS id FROM ${t()} WHERE ID = ${b.slot('id')}`),
      );
      if (ctx.db !== 'sqlite') {
        expect(reader).toBeUndefined();
        return;
      }
      expect(reader!.columns).toEqual(['n', 'id']);
      expect(reader!.row({ id: 'a' })).toEqual([1, 'a']);
      expect(reader!.row({ id: 'nope' })).toBeNull();
      await ctx.sql.transaction(async (tx) => {
        // The shared connection is held by the transaction: the reader cannot run now.
        expect(reader!.row({ id: 'a' })).toBeUndefined();
        expect(tx.rowReader(new TemplateBinder<object>(d).template(`SELECT ID FROM ${t()}`))).toBeUndefined();
        await tx.execute(statement(`UPDATE ${t()} SET N = ${p(1)} WHERE ID = ${p(2)}`, [2, 'a']));
      });
      expect(reader!.row({ id: 'a' })).toEqual([2, 'a']);
      expect(d.name).toBe('sqlite');
    });

    it('runs a write synchronously on SQLite only, never inside a transaction, and throws what the driver throws', async () => {
      const update = `UPDATE ${t()} SET N = ${p(1)} WHERE ID = ${p(2)}`;
      expect(ctx.sql.runsSynchronously).toBe(ctx.db === 'sqlite');
      if (ctx.db !== 'sqlite') {
        expect(ctx.sql.executeSync(statement(update, [5, 'a']))).toBeUndefined();
        return;
      }
      const [before] = await ctx.sql.query<{ n: unknown }>(
        statement(`SELECT N AS n FROM ${t()} WHERE ID = ${p(1)}`, ['a']),
      );
      expect(ctx.sql.executeSync(statement(update, [5, 'a']))).toBe(1);
      expect(ctx.sql.executeSync(statement(update, [5, 'nope']))).toBe(0);
      await ctx.sql.transaction(async (tx) => {
        // The shared connection is held by the transaction: the write cannot run now.
        expect(ctx.sql.executeSync(statement(update, [6, 'a']))).toBeUndefined();
        expect(tx.runsSynchronously).toBe(false);
      });
      const [after] = await ctx.sql.query<{ n: unknown }>(
        statement(`SELECT N AS n FROM ${t()} WHERE ID = ${p(1)}`, ['a']),
      );
      expect(toNumber(after.n)).toBe(5);
      expect(() => ctx.sql.executeSync(statement(`UPDATE ${t()} SET NOPE = 1`))).toThrow(/NOPE/);
      await ctx.sql.execute(statement(update, [before.n, 'a']));
    });

    it('reads timestamps in epoch ms in SQL where the dialect can, exactly as the client reads them', async () => {
      const d = ctx.sql.dialect;
      const millis = d.timestampSql().millis;
      if (!millis) return;
      const values = [
        ...[0, -1, 1, Date.parse('2026-03-04T05:06:07.089Z'), Date.parse('9999-12-31T23:59:59.999Z')].map(
          (ms) => d.timestampParam(new Date(ms)),
        ),
        // Not what the dialect writes: left to the client, which reads them as before.
        '2026-03-04 05:06:07',
        '2026-03-04T05:06:07.089+02:00',
        'now',
        '12:30',
        '2460000.5',
        'not a time',
      ];
      for (const value of values) {
        const [row] = await ctx.sql.query<{ ms: unknown }>(
          statement(`SELECT ${millis('v')} AS ms FROM (${d.selectRow(`${p(1)} AS v`)}) given`, [value]),
        );
        const expected = d.readTimestamp(value).getTime();
        const got = d.readTimestamp(row.ms).getTime();
        expect([value, got]).toEqual([value, expected]);
      }
    });
  },
  { tables: ['CORE_THING'] },
);
