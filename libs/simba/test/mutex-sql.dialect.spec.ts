import { sqlDialect } from '@holdfast/core/kit';
import {
  atLeastAfter,
  busyTimeoutQuery,
  insertMissing,
  transactionStatementTimeout,
  withStatementTimeout,
} from '../src/store/mutex-sql.dialect';

describe("Simba's SQL per dialect", () => {
  it('bounds one statement server-side on MariaDB only, in seconds to the ms', () => {
    expect(withStatementTimeout(sqlDialect('mariadb'), 'SELECT 1', 1_500)).toBe(
      'SET STATEMENT max_statement_time = 1.500 FOR SELECT 1',
    );
    expect(withStatementTimeout(sqlDialect('mariadb'), 'SELECT 1', 0.4)).toBe(
      'SET STATEMENT max_statement_time = 0.001 FOR SELECT 1',
    );
    for (const d of ['postgres', 'mysql', 'sqlite', 'mssql', 'oracle'] as const)
      expect(withStatementTimeout(sqlDialect(d), 'SELECT 1', 1_500)).toBe('SELECT 1');
  });

  it("bounds a transaction's statements and idle time on PostgreSQL only, with bound values", () => {
    expect(transactionStatementTimeout(sqlDialect('postgres'), 500.7)).toEqual({
      sql: "SELECT set_config('statement_timeout', $1, true) AS a, set_config('idle_in_transaction_session_timeout', $2, true) AS b",
      params: ['500ms', '500ms'],
    });
    expect(transactionStatementTimeout(sqlDialect('postgres'), 0)?.params).toEqual(['1ms', '1ms']);
    for (const d of ['mysql', 'mariadb', 'sqlite', 'mssql', 'oracle'] as const)
      expect(transactionStatementTimeout(sqlDialect(d), 500)).toBeUndefined();
  });

  it('reads the busy timeout on SQLite only', () => {
    expect(busyTimeoutQuery(sqlDialect('sqlite'))).toBe('PRAGMA busy_timeout');
    for (const d of ['postgres', 'mysql', 'mariadb', 'mssql', 'oracle'] as const)
      expect(busyTimeoutQuery(sqlDialect(d))).toBeUndefined();
  });

  it('inserts only missing rows, each dialect its own way', () => {
    const spec = {
      table: 'P_M',
      columns: ['K', 'N', 'S'],
      key: 'K',
      keys: ['a', 'b'],
      row: (k: string) => `${k}, 0, ''`,
    };
    expect(insertMissing(sqlDialect('postgres'), spec).params).toEqual(['a', 'b']);
    expect(insertMissing(sqlDialect('postgres'), spec).sql).toBe(
      "INSERT INTO P_M (K, N, S) VALUES ($1, 0, ''), ($2, 0, '') ON CONFLICT (K) DO NOTHING",
    );
    expect(insertMissing(sqlDialect('sqlite'), spec).sql).toBe(
      "INSERT INTO P_M (K, N, S) VALUES (?, 0, ''), (?, 0, '') ON CONFLICT (K) DO NOTHING",
    );
    for (const d of ['mysql', 'mariadb'] as const) {
      expect(insertMissing(sqlDialect(d), spec).sql).toBe(
        "INSERT INTO P_M (K, N, S) VALUES (?, 0, ''), (?, 0, '') ON DUPLICATE KEY UPDATE K = K",
      );
    }
    expect(insertMissing(sqlDialect('mssql'), spec).sql).toBe(
      "INSERT INTO P_M (K, N, S) SELECT v.K, 0, '' FROM (SELECT @0 AS K UNION ALL SELECT @1 AS K) v " +
        'WHERE NOT EXISTS (SELECT 1 FROM P_M t WHERE t.K = v.K)',
    );
    expect(insertMissing(sqlDialect('oracle'), { ...spec, keys: ['a'] }).sql).toBe(
      "INSERT INTO P_M (K, N, S) SELECT v.K, 0, '' FROM (SELECT :1 AS K FROM DUAL) v " +
        'WHERE NOT EXISTS (SELECT 1 FROM P_M t WHERE t.K = v.K)',
    );
  });

  it('renders a value that never goes back below previous + 1', () => {
    expect(atLeastAfter(sqlDialect('sqlite'), 'NOW', 'PREV')).toBe('MAX(NOW, PREV + 1)');
    expect(atLeastAfter(sqlDialect('mssql'), 'NOW', 'PREV')).toBe(
      'CASE WHEN NOW > PREV THEN NOW ELSE PREV + 1 END',
    );
    for (const d of ['postgres', 'mysql', 'mariadb', 'oracle'] as const) {
      expect(atLeastAfter(sqlDialect(d), 'NOW', 'PREV')).toBe('GREATEST(NOW, PREV + 1)');
    }
  });
});
