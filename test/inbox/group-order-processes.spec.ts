import { testDatabases } from '@holdfast/testing';
import { runGroupOrder } from './support/group-order-run';

/**
 * Strict order per group (`groupBy`) with 3 real processes, SIGKILLs and 20% of first attempts
 * failing: PostgreSQL and MariaDB in competing mode, SQLite in leader mode. A longer run is in
 * group-order-soak.spec.ts (HOLDFAST_TEST_SOAK=1).
 */
describe('inbox strict order per group across processes', () => {
  it.each(testDatabases())(
    '[%s] every group is handled in acceptance order, groups in parallel, through kills and failures',
    async (db) => {
      await runGroupOrder(db, { groups: 12, perGroup: 20, workers: 3, kills: 2, visibilityMs: 3000 });
    },
    180_000,
  );
});
