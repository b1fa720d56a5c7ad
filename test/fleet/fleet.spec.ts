/**
 * #43: a fleet larger than the server allows. 16 replicas of one service (each: an application
 * pool of 5, Simba with a leader job and 20 shard mutexes spread over the fleet, a lease-database
 * lock, a delivering inbox; real processes, as test/fleet/workers/fleet-replica.worker.ts) boot at
 * once on a private server whose max_connections holds about half of them, connecting as a role
 * without superuser rights. Every replica boots or is refused, by Holdfast's connection budget
 * with the budget named (or, for a replica whose application pool itself finds no room, by the
 * server before Holdfast runs); the replicas that booted log no ERROR, keep one leader term and
 * one master, own every shard, and deliver 2,000 messages accepted afterwards, each once, leaving
 * no row behind. Before the budget, the newcomers' connections hurt the running replicas:
 * deletes that failed with "too many clients" (ERROR lines, rows delivered again after their
 * lease). In the soak step; about 90 s per database on a busy 2-core machine.
 */
import { testDatabases } from '@holdfast/testing';
import { runFleet, type FleetRunResult } from './support/fleet-run';

const REPLICAS = 16;
/** About half the fleet: each replica holds 3 connections of Holdfast's (2 on MariaDB) and 1 of its own pool. */
const SERVERS = {
  postgres: { port: 25_522, maxConnections: 40 },
  mariadb: { port: 25_523, maxConnections: 30 },
};
/** What the server says when a replica's own application pool finds no room (before Holdfast runs). */
const SERVER_REFUSAL =
  /53300|too many clients|remaining connection slots|Too many connections|ER_CON_COUNT_ERROR/i;

jest.setTimeout(360_000);

for (const db of testDatabases().filter((d): d is 'postgres' | 'mariadb' => d !== 'sqlite')) {
  describe(`a fleet of ${REPLICAS} replicas on a server with room for about half [${db}]`, () => {
    let result: FleetRunResult;

    beforeAll(async () => {
      result = await runFleet({
        db,
        ...SERVERS[db],
        replicas: REPLICAS,
        settleMs: 3_000,
        idleMs: 5_000,
        messages: 2_000,
        simba: { spread: ['shard-'] },
        log: (line) => console.log(`[fleet ${db}] ${line}`),
      });
    });

    it('every replica boots or is refused with the budget named', () => {
      expect(result.booted).toBeGreaterThanOrEqual(2);
      expect(result.refused.length).toBeGreaterThanOrEqual(1);
      expect(result.booted + result.refused.length).toBe(REPLICAS);
      const byHoldfast = result.refused.filter((r) => r.code === 'HOLDFAST_CORE_CONNECTION_BUDGET');
      expect(byHoldfast.length).toBeGreaterThanOrEqual(1);
      for (const r of byHoldfast) {
        expect(r.message).toMatch(/Holdfast needs \d+ connection\(s\) of its own/);
        expect(r.message).toMatch(/max_connections \d+/);
        expect(r.message).toMatch(/\d+ in use/);
      }
      const others = result.refused.filter((r) => r.code !== 'HOLDFAST_CORE_CONNECTION_BUDGET');
      for (const r of others) expect(r.message).toMatch(SERVER_REFUSAL);
    });

    it('the replicas that booted lose nothing: no ERROR, one leader term, no two masters, every shard owned', () => {
      expect(result.runningErrors).toEqual([]);
      expect(result.leaderTerms).toBe(1);
      expect(result.overlaps).toEqual({ leader: 0, master: 0 });
      expect(result.masterTerms).toBe(1);
      expect(result.shards.unowned).toBe(0);
    });

    it('they deliver every message accepted afterwards once, leaving no row behind', () => {
      expect(result.delivery).toMatchObject({ messages: 2_000, unique: 2_000, duplicates: 0, leftBehind: 0 });
    });
  });
}
