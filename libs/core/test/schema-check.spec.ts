import { Catalog, SchemaManager, SchemaMismatchError, type TableSpec, statement } from '@holdfast/core/kit';
import { sqliteAffinity } from '../src/dialect/sqlite-affinity';
import { describeEachDatabase, type TestDatabase } from '@holdfast/testing';

/** A table in the shape of the seeds' problems: a CHAR(32) owner, a seed timestamp, an optional extra. */
const spec = (name: string): TableSpec => ({
  name,
  columns: [
    { name: 'ID', type: { kind: 'varchar', length: 64 } },
    {
      name: 'OWNER_ID',
      type: { kind: 'varchar', length: 128 },
      accept: [{ kind: 'char', length: 32 }],
      minLength: 32,
      default: "''",
    },
    { name: 'AT', type: { kind: 'bigint' }, accept: [{ kind: 'timestamp' }] },
    { name: 'N', type: { kind: 'int' } },
    { name: 'NOTE', type: { kind: 'text' } },
    { name: 'EXTRA', type: { kind: 'bigint' }, optional: true },
  ],
  primaryKey: ['ID'],
});

/** Column DDL per database, overridable per test. */
function ddl(db: TestDatabase, table: string, columns: Record<string, string | null>): string {
  const defaults: Record<TestDatabase, Record<string, string>> = {
    postgres: {
      ID: 'VARCHAR(64) NOT NULL',
      OWNER_ID: 'CHAR(32) NOT NULL',
      AT: 'TIMESTAMP WITH TIME ZONE NOT NULL',
      N: 'INT NOT NULL',
      NOTE: 'TEXT',
    },
    mariadb: {
      ID: 'VARCHAR(64) NOT NULL',
      OWNER_ID: 'CHAR(32) NOT NULL',
      AT: 'DATETIME(3) NOT NULL',
      N: 'INT UNSIGNED NOT NULL',
      NOTE: 'MEDIUMTEXT',
    },
    sqlite: {
      ID: 'VARCHAR(64) NOT NULL',
      OWNER_ID: 'CHAR(32) NOT NULL',
      AT: 'TIMESTAMP NOT NULL',
      N: 'INT UNSIGNED NOT NULL',
      NOTE: 'TEXT',
    },
  };
  const merged = { ...defaults[db], ...columns };
  const parts = Object.entries(merged)
    .filter(([, type]) => type !== null)
    .map(([name, type]) => `${name} ${type}`);
  return `CREATE TABLE ${table} (${parts.join(', ')}, PRIMARY KEY (ID))`;
}

const TABLES = [
  'CHK_OWN',
  'CHK_SEED',
  'CHK_MISSING',
  'CHK_TYPE',
  'CHK_SHORT',
  'CHK_SHORT_OWNER',
  'CHK_EXTRA',
  'CHK_LISTED',
];

describeEachDatabase(
  'SchemaManager checks the live table',
  (ctx) => {
    const t = (name: string) => `${ctx.prefix}${name}`;
    const apply = (name: string, mode: 'create' | 'check' | 'none' = 'check') =>
      new SchemaManager(ctx.sql).apply(spec(name), ctx.prefix, mode);
    const refusal = async (name: string, mode: 'create' | 'check' = 'check') => {
      const error = await apply(name, mode).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SchemaMismatchError);
      expect((error as SchemaMismatchError).code).toBe('HOLDFAST_CORE_SCHEMA_MISMATCH');
      return (error as SchemaMismatchError).message;
    };
    const fromDdl = () =>
      `create the table from Holdfast's DDL (\`holdfast migrate\` or \`holdfast ddl --dialect ${ctx.sql.dialect.name}\` from @holdfast/cli).`;

    it("accepts Holdfast's own table and describes it", async () => {
      await apply('CHK_OWN', 'create');
      const live = await apply('CHK_OWN', 'check');
      expect(live.exists).toBe(true);
      expect(live.has('extra')).toBe(true);
      const owner = live.column('owner_id')!;
      expect(owner.kind).toBe('varchar');
      expect(owner.hasDefault).toBe(true);
      expect(live.column('ID')!.nullable).toBe(false);
      expect(live.column('NOTE')!.nullable).toBe(true);
      expect(live.column('NOTE')!.hasDefault).toBe(false);
      expect([...live.columns.keys()]).toEqual(['id', 'owner_id', 'at', 'n', 'note', 'extra']);
      switch (ctx.db) {
        case 'postgres':
          expect(owner).toMatchObject({ rawType: 'character varying(128)', length: 128 });
          expect(live.column('AT')!.rawType).toBe('bigint');
          break;
        case 'mariadb':
          expect(owner).toMatchObject({ rawType: 'varchar(128)', length: 128 });
          expect(live.column('AT')!.rawType).toBe('bigint(20)');
          break;
        case 'sqlite':
          expect(owner).toMatchObject({ rawType: 'VARCHAR(128)', length: undefined, affinity: 'TEXT' });
          expect(live.column('AT')!.affinity).toBe('INTEGER');
          break;
      }
    });

    it("lists the tables of the connection's schema by name, in one read (the CLI's prefixes)", async () => {
      await apply('CHK_LISTED', 'create');
      const names = (await Catalog.of(ctx.sql).tableNames())!.map((n) => n.toLowerCase());
      expect(names).toContain(t('CHK_LISTED').toLowerCase());
      expect(names).not.toContain(t('CHK_NEVER').toLowerCase());
    });

    it('accepts the seed-style alternatives (CHAR(32), a timestamp, unsigned ints), with the optional column absent', async () => {
      await ctx.sql.execute(statement(ddl(ctx.db, t('CHK_SEED'), {})));
      for (const mode of ['check', 'create'] as const) {
        const live = await apply('CHK_SEED', mode);
        expect(live.has('EXTRA')).toBe(false);
        expect(live.column('EXTRA')).toBeUndefined();
        expect(live.column('OWNER_ID')!.kind).toBe('char');
        expect(live.column('AT')!.kind).toBe('timestamp');
        expect(live.column('OWNER_ID')!.hasDefault).toBe(false);
        expect(live.column('OWNER_ID')!.length).toBe(ctx.db === 'sqlite' ? undefined : 32);
      }
      // Mode 'none' checks nothing but still describes the table.
      expect((await apply('CHK_SEED', 'none')).has('OWNER_ID')).toBe(true);
      expect((await apply('CHK_NOT_THERE', 'none')).exists).toBe(false);
    });

    it('refuses a missing column, naming the table, the column and the accepted types', async () => {
      await ctx.sql.execute(statement(ddl(ctx.db, t('CHK_MISSING'), { N: null })));
      const int = { postgres: 'INTEGER', mariadb: 'INT', sqlite: 'INTEGER' }[ctx.db];
      const accepted = ctx.db === 'sqlite' ? 'INTEGER (INTEGER affinity)' : int;
      const expected =
        `Table ${t('CHK_MISSING')} has no column N (accepted types: ${accepted}). Holdfast never alters an ` +
        `existing table: add the column (ALTER TABLE ${t('CHK_MISSING')} ADD COLUMN N ${int}), or ${fromDdl()}`;
      expect(await refusal('CHK_MISSING')).toBe(expected);
      expect(await refusal('CHK_MISSING', 'create')).toBe(expected);
    });

    it('refuses a column of the wrong type, naming the type found and the types accepted', async () => {
      await ctx.sql.execute(statement(ddl(ctx.db, t('CHK_TYPE'), { N: 'VARCHAR(20)' })));
      const found = {
        postgres: 'character varying(20)',
        mariadb: 'varchar(20)',
        sqlite: 'VARCHAR(20) (TEXT affinity)',
      }[ctx.db];
      const accepted = { postgres: 'INTEGER', mariadb: 'INT', sqlite: 'INTEGER (INTEGER affinity)' }[ctx.db];
      const expected =
        `Table ${t('CHK_TYPE')}, column N: found type ${found}, accepted: ${accepted}. Holdfast never alters ` +
        `an existing table: change the column to an accepted type, or ${fromDdl()}`;
      expect(await refusal('CHK_TYPE')).toBe(expected);
      expect(await refusal('CHK_TYPE', 'create')).toBe(expected);
    });

    it('refuses a varchar shorter than the spec (or than its minLength); SQLite enforces no length', async () => {
      await ctx.sql.execute(statement(ddl(ctx.db, t('CHK_SHORT'), { ID: 'VARCHAR(40) NOT NULL' })));
      await ctx.sql.execute(statement(ddl(ctx.db, t('CHK_SHORT_OWNER'), { OWNER_ID: 'CHAR(16) NOT NULL' })));
      if (ctx.db === 'sqlite') {
        // SQLite stores text of any length in a VARCHAR(40): the code works with it.
        await expect(apply('CHK_SHORT')).resolves.toBeDefined();
        await expect(apply('CHK_SHORT_OWNER')).resolves.toBeDefined();
        return;
      }
      const [id, owner] =
        ctx.db === 'postgres' ? ['character varying(40)', 'character(16)'] : ['varchar(40)', 'char(16)'];
      expect(await refusal('CHK_SHORT')).toBe(
        `Table ${t('CHK_SHORT')}, column ID: found type ${id}, accepted: VARCHAR(64) or longer. Holdfast ` +
          `never alters an existing table: change the column to an accepted type, or ${fromDdl()}`,
      );
      expect(await refusal('CHK_SHORT_OWNER')).toBe(
        `Table ${t('CHK_SHORT_OWNER')}, column OWNER_ID: found type ${owner}, accepted: VARCHAR(32) or longer, ` +
          `CHAR(32) or longer. Holdfast never alters an existing table: change the column to an accepted type, ` +
          `or ${fromDdl()}`,
      );
    });

    it('reports an optional column that is present', async () => {
      await ctx.sql.execute(statement(ddl(ctx.db, t('CHK_EXTRA'), { EXTRA: 'BIGINT' })));
      const live = await apply('CHK_EXTRA');
      expect(live.column('extra')).toMatchObject({ kind: 'bigint', nullable: true });
    });

    it('reads one live column and an index by its exact name through a bare query function (Catalog)', async () => {
      const table = t('CHK_CATALOG');
      const at = { postgres: 'TIMESTAMP WITH TIME ZONE', mariadb: 'TIMESTAMP(3) NULL', sqlite: 'TIMESTAMP' }[
        ctx.db
      ];
      const extra = ctx.db === 'postgres' ? 'TIMESTAMP WITH TIME ZONE' : 'DATETIME(3)';
      await ctx.sql.execute(statement(ddl(ctx.db, table, { AT: at, EXTRA: extra })));
      await ctx.sql.execute(statement(`CREATE INDEX ${t('IDX_CHK_CATALOG_N')} ON ${table} (N, ID)`));
      const d = new Catalog(ctx.sql.dialect, (s) => ctx.sql.query(s));
      const column = await d.column(table, 'at');
      expect(column!.name.toUpperCase()).toBe('AT');
      expect(column!.kind).toBe('timestamp');
      expect(column!.timestampStorage).toBe(ctx.db === 'mariadb' ? 'timestamp' : undefined);
      const datetime = await d.column(table, 'EXTRA');
      expect(datetime!.timestampStorage).toBe(ctx.db === 'mariadb' ? 'datetime' : undefined);
      expect(await d.column(table, 'NOT_THERE')).toBeUndefined();
      expect(await d.column(t('CHK_NOT_THERE'), 'AT')).toBeUndefined();
      expect(await d.hasIndexNamed(table, t('IDX_CHK_CATALOG_N'))).toBe(true);
      expect(await d.hasIndexNamed(table, t('IDX_CHK_CATALOG_N').toLowerCase())).toBe(true);
      // Another name on the same leading column does not count (FORCE INDEX names the index).
      expect(await d.hasIndexNamed(table, t('IDX_CHK_CATALOG_OTHER'))).toBe(false);
      expect(await new SchemaManager(ctx.sql).indexExists(table, t('IDX_CHK_CATALOG_OTHER'), ['N'])).toBe(
        true,
      );
      // Both read the one catalog reader: every index with its leading column.
      const indexes = await d.indexes(table);
      expect(indexes!.find((i) => i.name.toLowerCase() === t('IDX_CHK_CATALOG_N').toLowerCase())).toEqual({
        name: expect.any(String),
        leading: 'n',
      });
      expect(await new SchemaManager(ctx.sql).indexExists(table, t('IDX_CHK_CATALOG_OTHER'), ['AT'])).toBe(
        false,
      );
      expect(await d.indexes(t('CHK_NOT_THERE'))).toEqual([]);
    });
  },
  { tables: [...TABLES, 'CHK_CATALOG', 'CHK_NOT_THERE'] },
);

describe('sqliteAffinity', () => {
  it("follows SQLite's rules in SQLite's order", () => {
    expect(sqliteAffinity('BIGINT UNSIGNED')).toBe('INTEGER');
    expect(sqliteAffinity('CHAR(32)')).toBe('TEXT');
    expect(sqliteAffinity('CHARINT')).toBe('INTEGER');
    expect(sqliteAffinity('CLOB')).toBe('TEXT');
    expect(sqliteAffinity('')).toBe('BLOB');
    expect(sqliteAffinity('DOUBLE PRECISION')).toBe('REAL');
    expect(sqliteAffinity('TIMESTAMP WITH TIME ZONE')).toBe('NUMERIC');
    expect(sqliteAffinity('DATETIME(3)')).toBe('NUMERIC');
    expect(sqliteAffinity('FLOATING POINT')).toBe('INTEGER');
  });
});
