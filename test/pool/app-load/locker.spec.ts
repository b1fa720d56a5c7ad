/**
 * #31: a locker master (the lease locker and the database row-lock locker) whose DataSource pool
 * of 5 is shared with 30 application loops (each running a 200 ms query back to back) keeps the
 * lock for 15 s, beside an idle standby in another process: its lock connection comes from the
 * locker's own coordination pool, not from the application's queue.
 * Server databases only (SQLite has one connection and no pool to share): jest.config.js leaves
 * this suite out of a SQLite-only run. A soak suite (about 30 s per locker and database).
 */
import { soakDatabase } from '@holdfast/testing';
import { runAppLoad } from '../support/app-load-run';

// One server (MariaDB, else PostgreSQL): the property is the pool's, the statements run on both elsewhere.
const databases = soakDatabase(['mariadb', 'postgres'] as const);
const cases = databases.flatMap((db) =>
  (['lease-database', 'database'] as const).map((kind) => [db, kind] as const),
);

describe('locker master under the application load (pool of 5, 30 loops of 200 ms)', () => {
  it.each(cases)(
    '[%s] the %s locker keeps the lock for 15 s: no loss, no takeover',
    async (db, kind) => {
      const result = await runAppLoad({ role: kind, db, seconds: 15 });
      expect(result.appQueries).toBeGreaterThan(0);
      expect({ losses: result.losses, takeovers: result.takeovers }).toEqual({ losses: 0, takeovers: 0 });
    },
    120_000,
  );
});
