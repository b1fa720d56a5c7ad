import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../bench/faults.bench';

/**
 * The plumbing of `npm run bench -- faults` (a soak: it starts a private PostgreSQL server and
 * three app replicas): one restart, one run, and the JSON it writes has a row per lib with the
 * checker's figures. The recovery times themselves are the bench's output, not asserted here.
 */
describe('npm run bench -- faults', () => {
  it('restarts a private PostgreSQL server under load once and writes a row per lib', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'faults-bench-'));
    const out = join(dir, 'faults.json');
    try {
      await main(['--db', 'postgres', '--runs', '1', '--faults', 'restart', '--port', '25470', '--out', out]);
      const result = JSON.parse(readFileSync(out, 'utf8')) as {
        rows: {
          fault: string;
          lib: string;
          db: string;
          runs: number;
          violations: number;
          lost: number | null;
        }[];
        cells: { runs: unknown[]; notes: string[] }[];
      };
      expect(result.cells).toHaveLength(1);
      expect(result.cells[0].runs).toHaveLength(1);
      expect(result.rows.map((r) => [r.fault, r.lib, r.db, r.runs])).toEqual([
        ['restart', 'simba', 'postgres', 1],
        ['restart', 'locker', 'postgres', 1],
        ['restart', 'inbox', 'postgres', 1],
        ['restart', 'failover', 'postgres', 1],
      ]);
      expect(result.rows.map((r) => r.violations)).toEqual([0, 0, 0, 0]);
      expect(result.rows.find((r) => r.lib === 'inbox')!.lost).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
