/**
 * The database lockers against a private server that really restarts or freezes (never the
 * shared ones): after each fault one instance is master again soon after the server is back,
 * never two at once, and nobody needs a manual step.
 */
import { monotonicMillis } from '@holdfast/core';
import {
  PrivateMariadb,
  PrivatePostgres,
  testDatabases,
  uniqueTablePrefix,
  type PrivateServer,
} from '@holdfast/core/testing';
import { LockerCluster, overlaps } from './cluster';

const INTERVAL = 1_000;
const KEEP_ALIVE = 250;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const URL_ENV = { postgres: 'HOLDFAST_TEST_PG_URL', mariadb: 'HOLDFAST_TEST_MARIADB_URL' } as const;

jest.setTimeout(180_000);

const servers = {
  postgres: () => new PrivatePostgres({ port: 55430 }),
  mariadb: () => new PrivateMariadb({ port: 33430 }),
};

for (const db of testDatabases().filter((d): d is 'postgres' | 'mariadb' => d !== 'sqlite')) {
  describe(`LockerModule on a private ${db} server that restarts or freezes`, () => {
    let server: PrivateServer;
    let savedUrl: string | undefined;
    beforeAll(async () => {
      server = servers[db]();
      await server.start();
      // The workers read their server from the environment they inherit.
      savedUrl = process.env[URL_ENV[db]];
      process.env[URL_ENV[db]] = server.url;
    });
    afterAll(async () => {
      if (savedUrl === undefined) delete process.env[URL_ENV[db]];
      else process.env[URL_ENV[db]] = savedUrl;
      await server?.destroy();
    });

    const faults: [string, () => Promise<void>][] = [
      ['an immediate restart', () => server.restart()],
      [
        'a freeze (SIGSTOP) longer than the lock interval',
        async () => {
          server.pause();
          await sleep(4 * INTERVAL);
          server.resume();
        },
      ],
    ];

    for (const type of ['lease-database', 'database'] as const) {
      for (const [fault, inject] of faults) {
        it(`${type}: after ${fault}, one master again without a manual step, never two`, async () => {
          const cluster = new LockerCluster();
          try {
            const base = {
              db,
              prefix: uniqueTablePrefix(`lkr_${db}`),
              interval: INTERVAL,
              keepAlive: KEEP_ALIVE,
              locker: { type },
            };
            cluster.spawn({ ...base, name: 'a' });
            cluster.spawn({ ...base, name: 'b' });
            await Promise.all(['a', 'b'].map((n) => cluster.next(n, 'ready', 60_000)));
            await cluster.firstAcquired(['a', 'b'], -Infinity, 30_000);

            const faultAt = monotonicMillis();
            await inject();
            const backAt = monotonicMillis();

            // Within a few intervals of the server being back: exactly one master, both healthy.
            let roles: string[] = [];
            const deadline = Date.now() + 30_000;
            for (;;) {
              const statuses = await Promise.all(['a', 'b'].map((n) => cluster.status(n)));
              roles = statuses.map((s) => s.role);
              const healthy = statuses.every((s) => s.lastError === undefined);
              if (roles.filter((r) => r === 'master').length === 1 && healthy) break;
              if (Date.now() > deadline) throw new Error(`not recovered: ${JSON.stringify(statuses)}`);
              await sleep(100);
            }
            const recoveredAt = monotonicMillis();
            expect(roles.sort()).toEqual(['master', 'standby']);
            expect(overlaps(cluster.terms())).toEqual([]);
            console.log(
              `[locker restart] ${type}/${db} ${fault}: fault ${backAt - faultAt} ms, one master ${recoveredAt - backAt} ms after the server was back`,
            );
          } finally {
            await cluster.closeAll();
          }
        });
      }
    }
  });
}
