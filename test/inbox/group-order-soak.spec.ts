import { soakDatabase } from '@holdfast/testing';
import { runGroupOrder } from './support/group-order-run';

/**
 * The long version of group-order-processes.spec.ts (HOLDFAST_TEST_SOAK=1): more groups, more
 * messages, more kills. On one database (MariaDB first; HOLDFAST_TEST_SOAK_ALL=1 for each): the
 * claim of each database keeps the order in group-order-processes.spec.ts, with kills, in the
 * default suites; this run adds length, which is the processes' and not the database's.
 */
describe('inbox strict order per group across processes (soak)', () => {
  it.each(soakDatabase(['mariadb', 'postgres', 'sqlite']))(
    '[%s] 40 groups x 100 messages, 3 nodes, 5 SIGKILLs, 20% of first attempts failing',
    async (db) => {
      await runGroupOrder(db, { groups: 40, perGroup: 100, workers: 3, kills: 5, visibilityMs: 3000 });
    },
    600_000,
  );
});
