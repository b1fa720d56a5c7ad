/**
 * #31: a Simba owner whose DataSource pool of 5 is shared with 30 application loops (each running
 * a 200 ms query back to back) keeps its lease for 30 s, beside an idle standby in another
 * process: its ticks run on Simba's own coordination pool, not in the application's queue.
 * Server databases only (SQLite has one connection and no pool to share): jest.config.js leaves
 * this suite out of a SQLite-only run. A soak suite (about 45 s per database).
 */
import { soakDatabase } from '@holdfast/testing';
import { runAppLoad } from '../support/app-load-run';

/**
 * A mutex that changes hands within 5 s: Simba's statement timeout is then transition / 3, about
 * 667 ms, less than a wait in the application's queue (30 loops of 200 ms on 5 connections: 1.2 s).
 */
const TTL_MS = 3_000;
const TRANSITION_MS = 2_000;
// One server (PostgreSQL, else MariaDB): the property is the pool's, the statements run on both elsewhere.
const databases = soakDatabase(['postgres', 'mariadb'] as const);

describe('Simba owner under the application load (pool of 5, 30 loops of 200 ms)', () => {
  it.each(databases)(
    '[%s] keeps its lease for 30 s: no release, no takeover',
    async (db) => {
      const result = await runAppLoad({
        role: 'simba',
        db,
        seconds: 30,
        ttl: TTL_MS,
        transition: TRANSITION_MS,
      });
      // The load really ran on the shared pool all along.
      expect(result.appQueries).toBeGreaterThan(0);
      expect({ losses: result.losses, takeovers: result.takeovers }).toEqual({ losses: 0, takeovers: 0 });
    },
    120_000,
  );
});
