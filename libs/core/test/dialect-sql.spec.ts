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

  it('bounds a DELETE the way of each dialect', () => {
    const batch = { table: 'P_T', where: 'AT < ?', orderBy: 'AT', limit: 50 };
    const where = (d: (typeof DIALECTS)[number]) => `AT < ${sqlDialect(d).placeholder(1)}`;
    const sql = (d: (typeof DIALECTS)[number]) => sqlDialect(d).deleteLimited({ ...batch, where: where(d) });
    expect(sql('postgres')).toBe(
      'DELETE FROM P_T WHERE ctid = ANY(ARRAY(SELECT ctid FROM P_T WHERE AT < $1 LIMIT 50)) AND AT < $1',
    );
    expect(sql('mysql')).toBe('DELETE FROM P_T WHERE AT < ? ORDER BY AT LIMIT 50');
    expect(sql('mariadb')).toBe('DELETE FROM P_T WHERE AT < ? ORDER BY AT LIMIT 50');
    expect(sql('sqlite')).toBe(
      'DELETE FROM P_T WHERE rowid IN (SELECT rowid FROM P_T WHERE AT < ? LIMIT 50)',
    );
    expect(sql('mssql')).toBe('DELETE TOP (50) FROM P_T WHERE AT < @0');
    expect(sql('oracle')).toBe('DELETE FROM P_T WHERE AT < :1 AND ROWNUM <= 50');
    // Without an order, MySQL/MariaDB delete in whatever order the plan finds the rows.
    expect(sqlDialect('mariadb').deleteLimited({ table: 'P_T', where: 'AT < ?', limit: 50 })).toBe(
      'DELETE FROM P_T WHERE AT < ? LIMIT 50',
    );
  });

  it.each(DIALECTS.map((d) => [d]))('%s: a bounded DELETE deletes at least one row, a whole number', (d) => {
    const dialect = sqlDialect(d);
    const where = `AT < ${dialect.placeholder(1)}`;
    const bound = (limit: number) => dialect.deleteLimited({ table: 'T', where, orderBy: 'AT', limit });
    expect(bound(7.9)).toBe(bound(7));
    expect(bound(0)).toBe(bound(1));
    expect(bound(-3)).toBe(bound(1));
    // Only the cutoff is bound, once (PostgreSQL's `$1` appears twice and names one parameter).
    expect(placeholderCount(d, bound(10))).toBe(1);
  });

  it('bounds an idle transaction on PostgreSQL (ms, transaction-local) and MySQL/MariaDB (s, session)', () => {
    expect(sqlDialect('postgres').idleTransactionTimeouts(1500)).toEqual([
      "SELECT set_config('idle_in_transaction_session_timeout', '1500', true) AS t",
    ]);
    expect(sqlDialect('postgres').idleTransactionTimeouts(0.2)).toEqual([
      "SELECT set_config('idle_in_transaction_session_timeout', '1', true) AS t",
    ]);
    expect(sqlDialect('mariadb').idleTransactionTimeouts(1500)).toEqual([
      'SET SESSION idle_transaction_timeout = 2',
      'SET SESSION wait_timeout = 2',
    ]);
    expect(sqlDialect('mysql').idleTransactionTimeouts(1500)).toEqual(['SET SESSION wait_timeout = 2']);
    expect(sqlDialect('mysql').idleTransactionTimeouts(1000)).toEqual(['SET SESSION wait_timeout = 1']);
    expect(sqlDialect('mysql').idleTransactionTimeouts(0)).toEqual(['SET SESSION wait_timeout = 1']);
    for (const d of ['sqlite', 'mssql', 'oracle'] as const)
      expect(sqlDialect(d).idleTransactionTimeouts(1500)).toEqual([]);
  });

  it('selects a row without a table, FROM DUAL on Oracle', () => {
    for (const d of ['postgres', 'mysql', 'mariadb', 'sqlite', 'mssql'] as const)
      expect(sqlDialect(d).selectRow('1 AS a, 2 AS b')).toBe('SELECT 1 AS a, 2 AS b');
    expect(sqlDialect('oracle').selectRow('1 AS a, 2 AS b')).toBe('SELECT 1 AS a, 2 AS b FROM DUAL');
  });

  it('bounds one statement server-side on MariaDB only, in seconds to the ms', () => {
    expect(sqlDialect('mariadb').withStatementTimeout('SELECT 1', 1_500)).toBe(
      'SET STATEMENT max_statement_time = 1.500 FOR SELECT 1',
    );
    expect(sqlDialect('mariadb').withStatementTimeout('SELECT 1', 0.4)).toBe(
      'SET STATEMENT max_statement_time = 0.001 FOR SELECT 1',
    );
    for (const d of ['postgres', 'mysql', 'sqlite', 'mssql', 'oracle'] as const)
      expect(sqlDialect(d).withStatementTimeout('SELECT 1', 1_500)).toBe('SELECT 1');
  });

  it("bounds a transaction's statements and idle time on PostgreSQL only, with bound values", () => {
    expect(sqlDialect('postgres').transactionStatementTimeout(500.7)).toEqual({
      sql: "SELECT set_config('statement_timeout', $1, true) AS a, set_config('idle_in_transaction_session_timeout', $2, true) AS b",
      params: ['500ms', '500ms'],
    });
    expect(sqlDialect('postgres').transactionStatementTimeout(0)?.params).toEqual(['1ms', '1ms']);
    for (const d of ['mysql', 'mariadb', 'sqlite', 'mssql', 'oracle'] as const)
      expect(sqlDialect(d).transactionStatementTimeout(500)).toBeUndefined();
  });

  it('reads the busy timeout on SQLite only', () => {
    expect(sqlDialect('sqlite').busyTimeoutQuery()).toBe('PRAGMA busy_timeout');
    for (const d of ['postgres', 'mysql', 'mariadb', 'mssql', 'oracle'] as const)
      expect(sqlDialect(d).busyTimeoutQuery()).toBeUndefined();
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

  it('inserts only missing rows, each dialect its own way', () => {
    const spec = {
      table: 'P_M',
      columns: ['K', 'N', 'S'],
      key: 'K',
      rows: 2,
      row: (k: string) => `${k}, 0, ''`,
    };
    expect(sqlDialect('postgres').insertMissing(spec)).toBe(
      "INSERT INTO P_M (K, N, S) VALUES ($1, 0, ''), ($2, 0, '') ON CONFLICT (K) DO NOTHING",
    );
    expect(sqlDialect('sqlite').insertMissing(spec)).toBe(
      "INSERT INTO P_M (K, N, S) VALUES (?, 0, ''), (?, 0, '') ON CONFLICT (K) DO NOTHING",
    );
    for (const d of ['mysql', 'mariadb'] as const) {
      expect(sqlDialect(d).insertMissing(spec)).toBe(
        "INSERT INTO P_M (K, N, S) VALUES (?, 0, ''), (?, 0, '') ON DUPLICATE KEY UPDATE K = K",
      );
    }
    expect(sqlDialect('mssql').insertMissing(spec)).toBe(
      "INSERT INTO P_M (K, N, S) SELECT v.K, 0, '' FROM (SELECT @0 AS K UNION ALL SELECT @1 AS K) v " +
        'WHERE NOT EXISTS (SELECT 1 FROM P_M t WHERE t.K = v.K)',
    );
    expect(sqlDialect('oracle').insertMissing({ ...spec, rows: 1 })).toBe(
      "INSERT INTO P_M (K, N, S) SELECT v.K, 0, '' FROM (SELECT :1 AS K FROM DUAL) v " +
        'WHERE NOT EXISTS (SELECT 1 FROM P_M t WHERE t.K = v.K)',
    );
  });

  it('renders a value that never goes back below previous + 1', () => {
    expect(sqlDialect('sqlite').atLeastAfter('NOW', 'PREV')).toBe('MAX(NOW, PREV + 1)');
    expect(sqlDialect('mssql').atLeastAfter('NOW', 'PREV')).toBe(
      'CASE WHEN NOW > PREV THEN NOW ELSE PREV + 1 END',
    );
    for (const d of ['postgres', 'mysql', 'mariadb', 'oracle'] as const) {
      expect(sqlDialect(d).atLeastAfter('NOW', 'PREV')).toBe('GREATEST(NOW, PREV + 1)');
    }
  });

  it('says SQLite alone is one connection to a file', () => {
    expect(DIALECTS.filter((d) => sqlDialect(d).singleConnection)).toEqual(['sqlite']);
  });

  it('says PostgreSQL alone has LISTEN/NOTIFY', () => {
    expect(DIALECTS.filter((d) => sqlDialect(d).supportsListenNotify)).toEqual(['postgres']);
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
