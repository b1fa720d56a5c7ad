import type { DataSource } from 'typeorm';
import { type PoolNeed } from '@holdfast/core/kit';
import { configuredPoolSize, poolBudgetWarning } from '../src/database/pool-budget';

describe('pool budget', () => {
  const pool = (options: object) => configuredPoolSize({ options } as DataSource);

  it("reads the pool size as each driver takes it (default the drivers' 10)", () => {
    expect(pool({ type: 'postgres', poolSize: 3 })).toBe(3);
    expect(pool({ type: 'postgres', extra: { max: 4 } })).toBe(4);
    expect(pool({ type: 'mariadb', extra: { connectionLimit: 5 } })).toBe(5);
    expect(pool({ type: 'mysql' })).toBe(10);
  });

  const needs: PoolNeed[] = [
    { component: "locker 'orders'", connections: 1, reserved: true },
    { component: 'simba (simba_mutex)', connections: 1 },
    { component: 'inbox (COR_MESSAGE)', connections: 2 },
    { component: 'failover (FAILOVER_STORE)', connections: 1 },
  ];

  it("names every module's share and the size to configure when the pool leaves the application none", () => {
    const warning = poolBudgetWarning(5, needs)!;
    expect(warning).toContain('pool has 5 connection(s)');
    expect(warning).toContain('may hold 5 at once');
    expect(warning).toContain("locker 'orders': 1 (kept for as long as the application runs)");
    expect(warning).toContain('inbox (COR_MESSAGE): 2');
    expect(warning).toContain('Raise poolSize to at least 6');
    expect(poolBudgetWarning(1, needs.slice(0, 1))).toContain('Raise poolSize to at least 2');
  });

  it('says nothing when the pool leaves the application at least one connection', () => {
    expect(poolBudgetWarning(6, needs)).toBeUndefined();
    expect(poolBudgetWarning(10, needs)).toBeUndefined();
    expect(poolBudgetWarning(1, [])).toBeUndefined();
  });
});
