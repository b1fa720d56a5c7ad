import { DIALECTS, sqlDialect, type SqlBinder } from '@holdfast/core/kit';
import {
  forceIndex,
  indexWalkFilter,
  keyedRows,
  keysInFrom,
  locksScannedRows,
  renameTable,
  rowAddress,
  subqueryFence,
  supportsListenNotify,
  upsertClause,
} from '../src/store/inbox-sql.dialect';

/** Binds with `?` and keeps the values. */
function binder(): SqlBinder & { params: unknown[] } {
  const params: unknown[] = [];
  return { params, bind: (value) => (params.push(value), '?') };
}

describe("the inbox's dialect SQL: statement targets, planner hints, locking, upsert, rename", () => {
  it('joins the keys on MySQL/MariaDB and lists them in the WHERE elsewhere', () => {
    for (const d of ['mysql', 'mariadb'] as const) {
      const b = binder();
      expect(keyedRows(sqlDialect(d), b, 'P_T', 'ID', ['a', 'b'])).toEqual({
        from: 'P_T AS m JOIN (SELECT ? AS hf_key UNION ALL SELECT ?) AS k ON m.ID = k.hf_key',
        deleteFrom: 'm FROM P_T AS m JOIN (SELECT ? AS hf_key UNION ALL SELECT ?) AS k ON m.ID = k.hf_key',
        where: '',
      });
      expect(b.params).toEqual(['a', 'b']);
      expect(keysInFrom(sqlDialect(d))).toBe(true);
    }
    const b = binder();
    expect(keyedRows(sqlDialect('postgres'), b, 'P_T', 'ID', ['a', 'b'])).toEqual({
      from: 'P_T',
      deleteFrom: 'FROM P_T',
      where: 'ID IN (?, ?) AND ',
    });
    expect(DIALECTS.filter((d) => keysInFrom(sqlDialect(d)))).toEqual(['mysql', 'mariadb']);
  });

  it('forces an index on MySQL/MariaDB only, and fences a subquery on PostgreSQL only', () => {
    expect(forceIndex(sqlDialect('mariadb'), 'P_IDX')).toBe('FORCE INDEX (P_IDX) ');
    expect(DIALECTS.filter((d) => forceIndex(sqlDialect(d), 'P_IDX') !== '')).toEqual(['mysql', 'mariadb']);
    expect(subqueryFence(sqlDialect('postgres'))).toBe(' OFFSET 0');
    expect(DIALECTS.filter((d) => subqueryFence(sqlDialect(d)) !== '')).toEqual(['postgres']);
  });

  it('keeps the index walk on PostgreSQL and finds rows by their address there', () => {
    expect(indexWalkFilter(sqlDialect('postgres'), 'A = 1')).toBe('COALESCE((A = 1), FALSE)');
    expect(DIALECTS.filter((d) => indexWalkFilter(sqlDialect(d), 'A = 1') !== 'A = 1')).toEqual(['postgres']);
    expect(rowAddress(sqlDialect('postgres'))).toBe('ctid');
    expect(rowAddress(sqlDialect('sqlite'))).toBe('rowid');
    expect(DIALECTS.filter((d) => rowAddress(sqlDialect(d)) !== undefined).sort()).toEqual([
      'postgres',
      'sqlite',
    ]);
  });

  it('says InnoDB locks the rows a locking read scans', () => {
    expect(DIALECTS.filter((d) => locksScannedRows(sqlDialect(d)))).toEqual(['mysql', 'mariadb']);
  });

  it('says PostgreSQL alone has LISTEN/NOTIFY', () => {
    expect(DIALECTS.filter((d) => supportsListenNotify(sqlDialect(d)))).toEqual(['postgres']);
  });

  it('renders the upsert clause of an INSERT where the dialect has one', () => {
    const clause = (d: (typeof DIALECTS)[number]) => upsertClause(sqlDialect(d), ['ID'], ['A', 'B']);
    expect(clause('postgres')).toBe('ON CONFLICT (ID) DO UPDATE SET A = EXCLUDED.A, B = EXCLUDED.B');
    expect(clause('sqlite')).toBe('ON CONFLICT (ID) DO UPDATE SET A = excluded.A, B = excluded.B');
    expect(clause('mariadb')).toBe('ON DUPLICATE KEY UPDATE A = VALUES(A), B = VALUES(B)');
    expect(clause('mssql')).toBeUndefined();
    expect(clause('oracle')).toBeUndefined();
  });

  it('renames a table the way of each dialect', () => {
    expect(renameTable(sqlDialect('postgres'), 'S.P_NEW', 'S.P_T')).toBe('ALTER TABLE S.P_NEW RENAME TO P_T');
    expect(renameTable(sqlDialect('mysql'), 'S.P_NEW', 'S.P_T')).toBe('RENAME TABLE S.P_NEW TO S.P_T');
    expect(renameTable(sqlDialect('mssql'), 'S.P_NEW', 'S.P_T')).toBe("EXEC sp_rename 'S.P_NEW', 'P_T'");
    expect(renameTable(sqlDialect('oracle'), 'S.P_NEW', 'S.P_T')).toBe('ALTER TABLE S.P_NEW RENAME TO P_T');
  });
});
