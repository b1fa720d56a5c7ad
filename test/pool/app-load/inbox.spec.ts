/**
 * #31: an inbox node claiming messages while its DataSource pool of 5 is shared with 30
 * application loops (each running a 200 ms query back to back), beside an idle node in another
 * process. Leases of 2 s, handlers of 1.5 s: the heartbeats must land within the lease whatever
 * the application does with the pool. Every message is delivered, with at most one batch of
 * duplicates (a claim whose answer was late), for 30 s of load.
 * Server databases only (SQLite has one connection and no pool to share): jest.config.js leaves
 * this suite out of a SQLite-only run. A soak suite (about 45 s per database).
 */
import { createTestDataSource, soakDatabase } from '@holdfast/testing';
import { runAppLoad } from '../support/app-load-run';

// One server (PostgreSQL, else MariaDB): the property is the pool's, the statements run on both elsewhere.
const databases = soakDatabase(['postgres', 'mariadb'] as const);
const BATCH = 10;

describe('inbox node under the application load (pool of 5, 30 loops of 200 ms)', () => {
  it.each(databases)(
    '[%s] delivers every message with at most a batch of duplicates',
    async (db) => {
      const seed = await createTestDataSource(db);
      try {
        const result = await runAppLoad({
          role: 'inbox',
          db,
          seconds: 30,
          dataSource: seed,
          messages: 200,
          visibilityTimeout: 2_000,
          handlerMs: 1_500,
          batchSize: BATCH,
        });
        expect(result.appQueries).toBeGreaterThan(0);
        expect(result.undelivered).toBe(0);
        expect(result.duplicates).toBeLessThanOrEqual(BATCH);
      } finally {
        await seed.destroy();
      }
    },
    120_000,
  );
});
