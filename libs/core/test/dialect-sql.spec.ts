import { Catalog, DIALECTS, createTableSql, ddlScript, sqlDialect, type TableSpec } from '@holdfast/core/kit';
import { countPlaceholders as placeholderCount } from '@holdfast/testing';

const spec = { table: 'P_T', columns: ['A', 'B', 'C', 'D'], keys: ['A', 'B'] };

describe('dialect SQL', () => {
  it.each(DIALECTS.map((d) => [d]))('%s: upsert has one placeholder per parameter, 1 and 3 rows', (d) => {
    const dialect = sqlDialect(d);
    expect(placeholderCount(d, dialect.upsert(spec))).toBe(4);
    expect(placeholderCount(d, dialect.upsert({ ...spec, rows: 3 }))).toBe(12);
  });

  it('renders the native upsert of each dialect', () => {
    expect(sqlDialect('postgres').upsert(spec)).toBe(
      'INSERT INTO P_T (A, B, C, D) VALUES ($1, $2, $3, $4) ON CONFLICT (A, B) DO UPDATE SET C = EXCLUDED.C, D = EXCLUDED.D',
    );
    expect(sqlDialect('mysql').upsert(spec)).toBe(
      'INSERT INTO P_T (A, B, C, D) VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE C = VALUES(C), D = VALUES(D)',
    );
    expect(sqlDialect('sqlite').upsert({ ...spec, rows: 2 })).toBe(
      'INSERT INTO P_T (A, B, C, D) VALUES (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (A, B) DO UPDATE SET C = excluded.C, D = excluded.D',
    );
    expect(sqlDialect('mssql').upsert(spec)).toBe(
      'MERGE INTO P_T WITH (HOLDLOCK) AS t USING (VALUES (@0, @1, @2, @3)) AS s (A, B, C, D) ON t.A = s.A AND t.B = s.B ' +
        'WHEN MATCHED THEN UPDATE SET t.C = s.C, t.D = s.D WHEN NOT MATCHED THEN INSERT (A, B, C, D) VALUES (s.A, s.B, s.C, s.D);',
    );
    expect(sqlDialect('oracle').upsert(spec)).toBe(
      'MERGE INTO P_T t USING (SELECT :1 AS A, :2 AS B, :3 AS C, :4 AS D FROM DUAL) s ON (t.A = s.A AND t.B = s.B) ' +
        'WHEN MATCHED THEN UPDATE SET t.C = s.C, t.D = s.D WHEN NOT MATCHED THEN INSERT (A, B, C, D) VALUES (s.A, s.B, s.C, s.D)',
    );
  });

  it('numbers placeholders per dialect', () => {
    expect(sqlDialect('postgres').placeholders(3)).toBe('$1, $2, $3');
    expect(sqlDialect('mssql').placeholders(2, 3)).toBe('@2, @3');
    expect(sqlDialect('oracle').placeholders(2)).toBe(':1, :2');
    expect(sqlDialect('mariadb').placeholders(2)).toBe('?, ?');
  });

  it('limits per dialect', () => {
    expect(sqlDialect('postgres').limit('SELECT A FROM T', 5)).toBe('SELECT A FROM T LIMIT 5');
    expect(sqlDialect('mssql').limit('SELECT A FROM T', 5)).toBe('SELECT TOP (5) A FROM T');
    expect(sqlDialect('oracle').limit('SELECT A FROM T', 5)).toBe('SELECT A FROM T FETCH FIRST 5 ROWS ONLY');
  });

  it('selects a row without a table, FROM DUAL on Oracle', () => {
    for (const d of ['postgres', 'mysql', 'mariadb', 'sqlite', 'mssql'] as const)
      expect(sqlDialect(d).selectRow('1 AS a, 2 AS b')).toBe('SELECT 1 AS a, 2 AS b');
    expect(sqlDialect('oracle').selectRow('1 AS a, 2 AS b')).toBe('SELECT 1 AS a, 2 AS b FROM DUAL');
  });

  it('offers an array row source on PostgreSQL only', () => {
    const columns = [
      { name: 'id', type: { kind: 'varchar', length: 64 } as const, placeholder: '$1' },
      { name: 'body', type: { kind: 'blob' } as const, placeholder: '$2' },
      { name: 'n', type: { kind: 'bigint' } as const, placeholder: '$3' },
    ];
    expect(sqlDialect('postgres').arraySource!(columns)).toBe(
      'UNNEST(CAST($1 AS VARCHAR[]), CAST($2 AS BYTEA[]), CAST($3 AS BIGINT[])) AS u(id, body, n)',
    );
    for (const d of ['mysql', 'mariadb', 'sqlite', 'mssql', 'oracle'] as const)
      expect(sqlDialect(d).arraySource).toBeUndefined();
  });

  it('rejects an unknown dialect', () => {
    expect(() => sqlDialect('db2' as never)).toThrow(/Unsupported database dialect "db2"/);
  });

  it('prints DDL for every dialect', () => {
    const table: TableSpec = {
      name: 'THING',
      columns: [
        { name: 'ID', type: { kind: 'varchar', length: 64 } },
        { name: 'AT', type: { kind: 'timestamp' }, nullable: false },
        { name: 'BODY', type: { kind: 'blob' } },
      ],
      primaryKey: ['ID'],
      indexes: [{ name: 'THING_AT_IDX', columns: ['AT'] }],
    };
    expect(ddlScript('postgres', [table], 'S.P_')).toBe(
      'CREATE TABLE S.P_THING (\n  ID VARCHAR(64) NOT NULL,\n  AT TIMESTAMP(3) WITH TIME ZONE NOT NULL,\n  BODY BYTEA,\n  PRIMARY KEY (ID)\n);\n\n' +
        'CREATE INDEX P_THING_AT_IDX ON S.P_THING (AT);\n',
    );
    expect(ddlScript('oracle', [table])).toContain('AT TIMESTAMP(3) WITH TIME ZONE NOT NULL');
    expect(ddlScript('mssql', [table])).toContain('ID NVARCHAR(64) NOT NULL');
    expect(ddlScript('mariadb', [table])).toContain('AT DATETIME(3) NOT NULL');
    expect(ddlScript('sqlite', [table])).toContain('BODY BLOB');
  });

  it('leaves room on each page for updates where the table asks for it (PostgreSQL only)', () => {
    const table: TableSpec = {
      name: 'QUEUE',
      columns: [{ name: 'ID', type: { kind: 'varchar', length: 64 } }],
      primaryKey: ['ID'],
      fillFactor: 50,
    };
    expect(createTableSql('postgres', table)).toBe(
      'CREATE TABLE QUEUE (\n  ID VARCHAR(64) NOT NULL,\n  PRIMARY KEY (ID)\n) WITH (fillfactor = 50)',
    );
    for (const d of ['mysql', 'mariadb', 'sqlite', 'mssql', 'oracle'] as const)
      expect(createTableSql(d, table)).not.toMatch(/fillfactor|WITH \(/i);
    expect(createTableSql('postgres', { ...table, fillFactor: 100 })).not.toContain('fillfactor');
    for (const bad of [5, 101, 50.5, NaN]) {
      expect(() => createTableSql('postgres', { ...table, fillFactor: bad })).toThrow(
        new RangeError(`fillFactor must be an integer from 10 to 100, got ${bad}`),
      );
    }
  });

  it('says SQLite alone is one connection to a file', () => {
    expect(DIALECTS.filter((d) => sqlDialect(d).singleConnection)).toEqual(['sqlite']);
  });

  it('says PostgreSQL alone has writable CTEs', () => {
    expect(DIALECTS.filter((d) => sqlDialect(d).writableCte)).toEqual(['postgres']);
  });

  it('reads no catalog where Holdfast does not execute SQL (SQL Server, Oracle)', async () => {
    const query = jest.fn(async () => []);
    for (const d of ['mssql', 'oracle'] as const) {
      expect(await new Catalog(sqlDialect(d), query).column('P_T', 'A')).toBeUndefined();
      expect(await new Catalog(sqlDialect(d), query).hasIndexNamed('P_T', 'P_I')).toBe(false);
    }
    expect(query).not.toHaveBeenCalled();
  });
});
