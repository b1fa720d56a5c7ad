import {
  DIALECTS,
  SchemaManager,
  StatementBinder,
  TemplateBinder,
  sqlDialect,
  statement,
  toNumber,
  type TableSpec,
} from '@holdfast/core/kit';
import { countPlaceholders, describeEachDatabase } from '@holdfast/testing';

interface Key {
  name: string;
  key: string;
}

describe('StatementTemplate', () => {
  it('writes its text once and binds each call by name, in the order the text needs', () => {
    for (const name of DIALECTS) {
      const d = sqlDialect(name);
      const b = new TemplateBinder<Key>(d);
      // The key first, then the name: the caller never learns that order.
      const find = b.template(`SELECT 1 FROM T WHERE K = ${b.slot('key')} AND N = ${b.slot('name')}`);
      expect(find.sql).toBe(`SELECT 1 FROM T WHERE K = ${d.placeholder(1)} AND N = ${d.placeholder(2)}`);
      expect(find.bind({ name: 'n', key: 'k' })).toEqual({ sql: find.sql, params: ['k', 'n'] });
      expect(find.bind({ name: 'm', key: 'j' })).toEqual({ sql: find.sql, params: ['j', 'm'] });
    }
  });

  it('gives a slot used twice a placeholder each, on every dialect', () => {
    for (const name of DIALECTS) {
      const d = sqlDialect(name);
      const b = new TemplateBinder<{ id: number }>(d);
      const t = b.template(`SELECT ${b.slot('id')} AS a, ${b.slot('id')} AS b`);
      expect(countPlaceholders(name, t.sql)).toBe(2);
      expect(t.params({ id: 7 })).toEqual([7, 7]);
    }
  });

  it("binds constants, a dialect piece's included, beside the slots, the same for every call", () => {
    const d = sqlDialect('postgres');
    const b = new TemplateBinder<Key>(d);
    const at = d.timestampSql().at(b, 250);
    const t = b.template(`SELECT ${at} FROM T WHERE N = ${b.slot('name')} AND S IN (${b.list(['x', 'y'])})`);
    expect(t.sql).toBe(`SELECT CAST($1 AS TIMESTAMPTZ) FROM T WHERE N = $2 AND S IN ($3, $4)`);
    const epoch = '1970-01-01T00:00:00.250Z';
    expect(t.params({ name: 'n', key: 'unused' })).toEqual([epoch, 'n', 'x', 'y']);
    expect(t.params({ name: 'm', key: 'unused' })).toEqual([epoch, 'm', 'x', 'y']);
  });

  it('writes the text a StatementBinder writes for the same values', () => {
    for (const name of DIALECTS) {
      const d = sqlDialect(name);
      const s = new StatementBinder(d);
      const one = s.statement(
        `UPDATE T SET A = ${s.bind(1)} WHERE N = ${s.bind('n')} AND K = ${s.bind('k')}`,
      );
      const b = new TemplateBinder<Key & { a: number }>(d);
      const t = b.template(
        `UPDATE T SET A = ${b.slot('a')} WHERE N = ${b.slot('name')} AND K = ${b.slot('key')}`,
      );
      expect(t.bind({ a: 1, name: 'n', key: 'k' })).toEqual(one);
    }
  });

  it('keeps its slots in a rewritten text, and its own text as it was', () => {
    const d = sqlDialect('mariadb');
    const b = new TemplateBinder<Key>(d);
    const find = b.template(`SELECT V FROM T WHERE N = ${b.slot('name')} AND K = ${b.slot('key')}`);
    const bounded = find.withText((sql) => `SET STATEMENT max_statement_time = 0.500 FOR ${sql}`);
    expect(bounded.sql).toBe(`SET STATEMENT max_statement_time = 0.500 FOR ${find.sql}`);
    expect(bounded.params({ name: 'n', key: 'k' })).toEqual(['n', 'k']);
    expect(find.sql).toBe('SELECT V FROM T WHERE N = ? AND K = ?');
  });

  it('takes any name for a slot: a name is data, never code', () => {
    const name = `x"]; throw new Error('no'); //`;
    const b = new TemplateBinder<Record<string, string>>(sqlDialect('sqlite'));
    const t = b.template(`SELECT ${b.slot(name)}, ${b.slot('a b')}`);
    expect(t.params({ [name]: 'one', 'a b': 'two' })).toEqual(['one', 'two']);
  });

  it('lists the same values where the runtime refuses code from strings', () => {
    const refuse = jest.spyOn(global, 'Function').mockImplementation(() => {
      throw new EvalError('Code generation from strings disallowed for this context');
    });
    try {
      const b = new TemplateBinder<Key>(sqlDialect('postgres'));
      const t = b.template(`SELECT ${b.bind('c')}, ${b.slot('key')}, ${b.slot('name')}, ${b.slot('key')}`);
      expect(refuse).toHaveBeenCalled();
      expect(t.params({ name: 'n', key: 'k' })).toEqual(['c', 'k', 'n', 'k']);
    } finally {
      refuse.mockRestore();
    }
  });

  it('hands out a new params array per call (a statement sent may be kept by the driver)', () => {
    const b = new TemplateBinder<Key>(sqlDialect('sqlite'));
    const t = b.template(`SELECT ${b.slot('name')}`);
    const first = t.params({ name: 'a', key: '' });
    const second = t.params({ name: 'b', key: '' });
    expect(first).not.toBe(second);
    expect(first).toEqual(['a']);
  });
});

const ROWS: TableSpec = {
  name: 'CORE_TEMPLATE',
  columns: [
    { name: 'NAME', type: { kind: 'varchar', length: 64 } },
    { name: 'K', type: { kind: 'varchar', length: 64 } },
    { name: 'N', type: { kind: 'bigint' } },
  ],
  primaryKey: ['NAME', 'K'],
};

describeEachDatabase(
  'SqlClient runs Statements',
  (ctx) => {
    const t = () => `${ctx.prefix}CORE_TEMPLATE`;

    beforeAll(async () => {
      await new SchemaManager(ctx.sql).apply(ROWS, ctx.prefix, 'create');
    });

    it('runs a Statement with query and execute, options included, and the deprecated (sql, params) form alike', async () => {
      const d = ctx.sql.dialect;
      const upsert = d.upsert({ table: t(), columns: ['NAME', 'K', 'N'], keys: ['NAME', 'K'] });
      expect(await ctx.sql.execute(statement(upsert, ['a', 'x', 1]), { prepared: true })).toBeGreaterThan(0);
      expect(await ctx.sql.execute(statement(upsert, ['a', 'y', 2]))).toBeGreaterThan(0);
      const b = new TemplateBinder<{ name: string }>(d);
      const byName = b.template(
        `SELECT K AS k, N AS n FROM ${t()} WHERE NAME = ${b.slot('name')} ORDER BY K`,
      );
      const rows = await ctx.sql.query<{ k: string; n: unknown }>(byName.bind({ name: 'a' }), {
        prepared: true,
      });
      expect(rows.map((r) => [r.k, toNumber(r.n)])).toEqual([
        ['x', 1],
        ['y', 2],
      ]);
      expect(await ctx.sql.query(statement(byName.sql, ['a']))).toHaveLength(2);
      expect(await ctx.sql.query(byName.bind({ name: 'nobody' }))).toEqual([]);
    });

    it('binds a slot used twice right on this database', async () => {
      const b = new TemplateBinder<{ name: string; n: number }>(ctx.sql.dialect);
      const both = b.template(
        `UPDATE ${t()} SET N = ${b.slot('n')} WHERE NAME = ${b.slot('name')} AND N < ${b.slot('n')}`,
      );
      expect(await ctx.sql.execute(both.bind({ name: 'a', n: 2 }))).toBe(1);
      expect(await ctx.sql.execute(both.bind({ name: 'a', n: 2 }))).toBe(0);
    });

    it("passes a Statement's options on: `commit` ends a MariaDB transaction with its last statement", async () => {
      const b = new TemplateBinder<{ name: string; k: string; n: number }>(ctx.sql.dialect);
      const insert = b.template(
        `INSERT INTO ${t()} (NAME, K, N) VALUES (${b.slot('name')}, ${b.slot('k')}, ${b.slot('n')})`,
      );
      const failed = ctx.sql.transaction(async (tx) => {
        await tx.execute(insert.bind({ name: 'tx', k: '1', n: 1 }));
        await tx.execute(insert.bind({ name: 'tx', k: '2', n: 2 }), { commit: true });
        throw new Error('after the last statement');
      });
      await expect(failed).rejects.toThrow('after the last statement');
      const s = new StatementBinder(ctx.sql.dialect);
      const [row] = await ctx.sql.query<{ c: unknown }>(
        s.statement(`SELECT COUNT(*) AS c FROM ${t()} WHERE NAME = ${s.bind('tx')}`),
      );
      // MariaDB sent the COMMIT with the statement; elsewhere the COMMIT had not gone yet.
      expect(toNumber(row.c)).toBe(ctx.db === 'mariadb' ? 2 : 0);
    });

    it('reads and writes a Statement synchronously on SQLite only', async () => {
      const b = new TemplateBinder<{ name: string; k: string }>(ctx.sql.dialect);
      const find = b.template(
        `SELECT N AS n FROM ${t()} WHERE NAME = ${b.slot('name')} AND K = ${b.slot('k')}`,
      );
      const w = new TemplateBinder<{ name: string; k: string; n: number }>(ctx.sql.dialect);
      const set = w.template(
        `UPDATE ${t()} SET N = ${w.slot('n')} WHERE NAME = ${w.slot('name')} AND K = ${w.slot('k')}`,
      );
      if (ctx.db !== 'sqlite') {
        expect(ctx.sql.querySync(find.bind({ name: 'a', k: 'x' }))).toBeUndefined();
        expect(ctx.sql.executeSync(set.bind({ name: 'a', k: 'x', n: 5 }))).toBeUndefined();
        return;
      }
      expect(ctx.sql.executeSync(set.bind({ name: 'a', k: 'x', n: 5 }))).toBe(1);
      expect(ctx.sql.querySync<{ n: unknown }>(find.bind({ name: 'a', k: 'x' }))).toEqual([{ n: 5 }]);
      await ctx.sql.transaction(async () => {
        // The shared connection is held by the transaction: neither can run now.
        expect(ctx.sql.querySync(find.bind({ name: 'a', k: 'x' }))).toBeUndefined();
        expect(ctx.sql.executeSync(set.bind({ name: 'a', k: 'x', n: 6 }))).toBeUndefined();
      });
    });

    it('feeds a row reader from a template, bound by name (SQLite only)', async () => {
      const b = new TemplateBinder<{ name: string; k: string }>(ctx.sql.dialect);
      const find = b.template(
        `SELECT N AS n, K AS k FROM ${t()} WHERE K = ${b.slot('k')} AND NAME = ${b.slot('name')}`,
      );
      const reader = ctx.sql.rowReader(find);
      if (ctx.db !== 'sqlite') {
        expect(reader).toBeUndefined();
        return;
      }
      expect(reader!.columns).toEqual(['n', 'k']);
      expect(reader!.row({ name: 'a', k: 'y' })).toEqual([2, 'y']);
      expect(reader!.row({ name: 'a', k: 'nope' })).toBeNull();
      await ctx.sql.transaction(async () => {
        expect(reader!.row({ name: 'a', k: 'y' })).toBeUndefined();
      });
    });
  },
  { tables: ['CORE_TEMPLATE'] },
);
