import { DIALECTS, sqlDialect } from '@holdfast/core/kit';
import { deleteLimited } from '@holdfast/core/kit';
import { cleanupBatchRows } from '@holdfast/failover/internal';
import { countPlaceholders as placeholderCount } from '@holdfast/testing';

describe('failover store SQL per dialect', () => {
  it('bounds a DELETE the way of each dialect', () => {
    const batch = { table: 'P_T', where: 'AT < ?', orderBy: 'AT', limit: 50 };
    const where = (d: (typeof DIALECTS)[number]) => `AT < ${sqlDialect(d).placeholder(1)}`;
    const sql = (d: (typeof DIALECTS)[number]) => deleteLimited(sqlDialect(d), { ...batch, where: where(d) });
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
    expect(deleteLimited(sqlDialect('mariadb'), { table: 'P_T', where: 'AT < ?', limit: 50 })).toBe(
      'DELETE FROM P_T WHERE AT < ? LIMIT 50',
    );
  });

  it.each(DIALECTS.map((d) => [d]))('%s: a bounded DELETE deletes at least one row, a whole number', (d) => {
    const dialect = sqlDialect(d);
    const where = `AT < ${dialect.placeholder(1)}`;
    const bound = (limit: number) => deleteLimited(dialect, { table: 'T', where, orderBy: 'AT', limit });
    expect(bound(7.9)).toBe(bound(7));
    expect(bound(0)).toBe(bound(1));
    expect(bound(-3)).toBe(bound(1));
    // Only the cutoff is bound, once (PostgreSQL's `$1` appears twice and names one parameter).
    expect(placeholderCount(d, bound(10))).toBe(1);
  });

  it('cleans up in batches of 1,000 rows on MySQL/MariaDB, 5,000 elsewhere', () => {
    expect(DIALECTS.map((d) => [d, cleanupBatchRows(sqlDialect(d))])).toEqual([
      ['postgres', 5_000],
      ['mysql', 1_000],
      ['mariadb', 1_000],
      ['sqlite', 5_000],
      ['mssql', 5_000],
      ['oracle', 5_000],
    ]);
  });
});
