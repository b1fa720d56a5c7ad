import { DIALECTS, sqlDialect, type Statement } from '@holdfast/core/kit';
import { countPlaceholders as placeholderCount } from '@holdfast/testing';
import { FailoverStoreQueryResolver } from '@holdfast/failover';

const resolver = new FailoverStoreQueryResolver();
type Ctx = Parameters<FailoverStoreQueryResolver['find']>[0];
const row = { name: 'n', key: 'k', asOf: 1, expireOn: 2, payload: '{}', payloadClass: 'Object' };
const lease = { name: 'n', key: 'k', asOf: 1, expireOn: 2, payload: '{}', now: 1 };
const queries: Array<[string, (ctx: Ctx) => Statement, number]> = [
  ['upsert', (c) => resolver.upsert(c, [row]), 6],
  ['upsert × 5 rows', (c) => resolver.upsert(c, [row, row, row, row, row]), 30],
  ['insert', (c) => resolver.insert(c, row), 6],
  ['update', (c) => resolver.update(c, row), 6],
  ['find', (c) => resolver.find(c, 'n', 'k'), 2],
  ['findAll', (c) => resolver.findAll(c, 'n'), 1],
  ['delete', (c) => resolver.delete(c, 'n', 'k'), 2],
  ['cleanByExpiry', (c) => resolver.cleanByExpiry(c, 1), 1],
  ['count', (c) => resolver.count(c, 'n'), 1],
  ['countLive', (c) => resolver.countLive(c, 'n', 1), 2],
  ['claimLease', (c) => resolver.claimLease(c, lease), 6],
];

describe('FailoverStoreQueryResolver', () => {
  for (const dialect of DIALECTS) {
    it.each(queries)(`${dialect}: %s has one placeholder per parameter`, (_name, build, params) => {
      const { sql, params: bound } = build({ table: 'APP_FAILOVER_STORE', dialect: sqlDialect(dialect) });
      expect(placeholderCount(dialect, sql)).toBe(params);
      expect(bound).toHaveLength(params);
      expect(sql).toContain('APP_FAILOVER_STORE');
    });
  }

  it('uses each dialect native upsert', () => {
    const ctx = (d: (typeof DIALECTS)[number]) => ({ table: 'T', dialect: sqlDialect(d) });
    const upsertSql = (c: Ctx) => resolver.upsert(c, [row]).sql;
    expect(upsertSql(ctx('postgres'))).toContain('ON CONFLICT (FAILOVER_NAME, FAILOVER_KEY) DO UPDATE');
    expect(upsertSql(ctx('sqlite'))).toContain('ON CONFLICT (FAILOVER_NAME, FAILOVER_KEY) DO UPDATE');
    expect(upsertSql(ctx('mariadb'))).toContain('ON DUPLICATE KEY UPDATE');
    expect(upsertSql(ctx('oracle'))).toMatch(/^MERGE INTO T t USING \(SELECT .* FROM DUAL\)/);
    expect(upsertSql(ctx('mssql'))).toMatch(/^MERGE INTO T WITH \(HOLDLOCK\) AS t USING \(VALUES/);
  });
});
