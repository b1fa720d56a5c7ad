import { DIALECTS, sqlDialect } from '@holdfast/core/kit';
import { countPlaceholders as placeholderCount } from '@holdfast/core/testing';
import { FailoverStoreQueryResolver } from '@holdfast/failover';

const resolver = new FailoverStoreQueryResolver();
const queries: Array<[string, (ctx: Parameters<FailoverStoreQueryResolver['find']>[0]) => string, number]> = [
  ['upsert', (c) => resolver.upsert(c), 6],
  ['upsert × 5 rows', (c) => resolver.upsert(c, 5), 30],
  ['insert', (c) => resolver.insert(c), 6],
  ['update', (c) => resolver.update(c), 6],
  ['find', (c) => resolver.find(c), 2],
  ['findAll', (c) => resolver.findAll(c), 1],
  ['delete', (c) => resolver.delete(c), 2],
  ['cleanByExpiry', (c) => resolver.cleanByExpiry(c), 1],
  ['count', (c) => resolver.count(c), 1],
  ['countLive', (c) => resolver.countLive(c), 2],
];

describe('FailoverStoreQueryResolver', () => {
  for (const dialect of DIALECTS) {
    it.each(queries)(`${dialect}: %s has one placeholder per parameter`, (_name, build, params) => {
      const sql = build({ table: 'APP_FAILOVER_STORE', dialect: sqlDialect(dialect) });
      expect(placeholderCount(dialect, sql)).toBe(params);
      expect(sql).toContain('APP_FAILOVER_STORE');
    });
  }

  it('uses each dialect native upsert', () => {
    const ctx = (d: (typeof DIALECTS)[number]) => ({ table: 'T', dialect: sqlDialect(d) });
    expect(resolver.upsert(ctx('postgres'))).toContain('ON CONFLICT (FAILOVER_NAME, FAILOVER_KEY) DO UPDATE');
    expect(resolver.upsert(ctx('sqlite'))).toContain('ON CONFLICT (FAILOVER_NAME, FAILOVER_KEY) DO UPDATE');
    expect(resolver.upsert(ctx('mariadb'))).toContain('ON DUPLICATE KEY UPDATE');
    expect(resolver.upsert(ctx('oracle'))).toMatch(/^MERGE INTO T t USING \(SELECT .* FROM DUAL\)/);
    expect(resolver.upsert(ctx('mssql'))).toMatch(/^MERGE INTO T WITH \(HOLDLOCK\) AS t USING \(VALUES/);
  });
});
