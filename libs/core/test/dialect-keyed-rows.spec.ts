import { DIALECTS, sqlDialect, type SqlBinder } from '@holdfast/core/kit';

/** Binds with `?` and keeps the values. */
function binder(): SqlBinder & { params: unknown[] } {
  const params: unknown[] = [];
  return { params, bind: (value) => (params.push(value), '?') };
}

describe('dialect statement targets, planner hints and locking', () => {
  it('joins the keys on MySQL/MariaDB and lists them in the WHERE elsewhere', () => {
    for (const d of ['mysql', 'mariadb'] as const) {
      const b = binder();
      expect(sqlDialect(d).keyedRows(b, 'P_T', 'ID', ['a', 'b'])).toEqual({
        from: 'P_T AS m JOIN (SELECT ? AS hf_key UNION ALL SELECT ?) AS k ON m.ID = k.hf_key',
        deleteFrom: 'm FROM P_T AS m JOIN (SELECT ? AS hf_key UNION ALL SELECT ?) AS k ON m.ID = k.hf_key',
        where: '',
      });
      expect(b.params).toEqual(['a', 'b']);
      expect(sqlDialect(d).keysInFrom).toBe(true);
    }
    const b = binder();
    expect(sqlDialect('postgres').keyedRows(b, 'P_T', 'ID', ['a', 'b'])).toEqual({
      from: 'P_T',
      deleteFrom: 'FROM P_T',
      where: 'ID IN (?, ?) AND ',
    });
    expect(DIALECTS.filter((d) => sqlDialect(d).keysInFrom)).toEqual(['mysql', 'mariadb']);
  });

  it('forces an index on MySQL/MariaDB only, and fences a subquery on PostgreSQL only', () => {
    expect(sqlDialect('mariadb').forceIndex('P_IDX')).toBe('FORCE INDEX (P_IDX) ');
    expect(DIALECTS.filter((d) => sqlDialect(d).forceIndex('P_IDX') !== '')).toEqual(['mysql', 'mariadb']);
    expect(sqlDialect('postgres').subqueryFence).toBe(' OFFSET 0');
    expect(DIALECTS.filter((d) => sqlDialect(d).subqueryFence !== '')).toEqual(['postgres']);
  });

  it('says InnoDB locks the rows a locking read scans, and PostgreSQL alone has writable CTEs', () => {
    expect(DIALECTS.filter((d) => sqlDialect(d).locksScannedRows)).toEqual(['mysql', 'mariadb']);
    expect(DIALECTS.filter((d) => sqlDialect(d).writableCte)).toEqual(['postgres']);
  });
});
