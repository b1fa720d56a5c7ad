import { Test, type TestingModule } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import { sqlClientFor } from '@holdfast/core/kit';
import {
  createTestDataSource,
  TcpProxy,
  testDatabases,
  uniqueTablePrefix,
  type TestDatabase,
} from '@holdfast/testing';
import { InboxModule, MessageAcceptor } from '../src';
import { InboxConnection } from '../src/store/inbox-connection';
import type { CorMessageStore } from '../src/store/cor-message.store';
import type { Lease } from '../src/store/cor-message.rows';

/**
 * PostgreSQL and MariaDB only (left out of the run otherwise, see jest.config.js).
 * Round trips of the delivery's statements, counted by a TcpProxy between the inbox and its
 * server: a database 1 ms away pays each one. No timing here, only counts.
 */
const SERVER_PORTS: Partial<Record<TestDatabase, () => number>> = {
  postgres: () =>
    Number(new URL(process.env.HOLDFAST_TEST_PG_URL ?? 'postgres://x@127.0.0.1:5432/test').port),
  mariadb: () =>
    Number(new URL(process.env.HOLDFAST_TEST_MARIADB_URL ?? 'mysql://x@127.0.0.1:3306/test').port),
};
const BATCH = 50;
const LEASE_MS = 30_000;

for (const db of testDatabases().filter((d) => SERVER_PORTS[d])) {
  describe(`inbox statements through a proxy: round trips [${db}]`, () => {
    let proxy: TcpProxy;
    let dataSource: DataSource;
    let app: TestingModule;
    let store: CorMessageStore;
    let acceptor: MessageAcceptor;
    const prefix = uniqueTablePrefix('rt');

    beforeAll(async () => {
      proxy = new TcpProxy(SERVER_PORTS[db]!());
      const port = await proxy.start();
      dataSource = await createTestDataSource(db, { port });
      app = await Test.createTestingModule({
        imports: [InboxModule.forRoot({ dataSource, tablePrefix: prefix, schema: 'create', deliver: false })],
      }).compile();
      await app.init();
      store = app.get(InboxConnection).store;
      acceptor = app.get(MessageAcceptor);
    });

    afterAll(async () => {
      await app?.close();
      if (dataSource?.isInitialized) {
        await sqlClientFor(dataSource).execute(`DROP TABLE IF EXISTS ${prefix}COR_MESSAGE`);
        await dataSource.destroy();
      }
      await proxy?.stop();
    });

    const accept = (n: number) =>
      acceptor.acceptAll(
        Array.from({ length: n }, (_, i) => ({ type: { namespace: 'rt', name: 'm' }, payload: { i } })),
      );

    /**
     * The round trips `work` costs, including what it sends after its caller has the answer (a
     * session reset before the connection goes back to the pool): counted once the connections
     * are quiet again.
     */
    async function tripsOf(work: () => Promise<unknown>): Promise<number> {
      await quiet();
      proxy.resetRoundTrips();
      await work();
      await quiet();
      return proxy.roundTrips;
    }

    /** Until nothing has passed the proxy for a while: work sent after an answer has arrived. */
    async function quiet(): Promise<void> {
      for (let last = -1; last !== proxy.roundTrips;) {
        last = proxy.roundTrips;
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
    }

    async function claimAll(): Promise<Lease[]> {
      const { rows } = await store.claims.claim(BATCH, undefined, LEASE_MS);
      return rows.map((r) => ({ id: r.id, until: r.nextRetry! }));
    }

    it(`claims a batch in ${db === 'postgres' ? 'one round trip' : 'at most 3 round trips'}`, async () => {
      await accept(BATCH);
      await claimAll(); // connections opened and statements planned before counting
      await accept(BATCH);
      let leases: Lease[] = [];
      const trips = await tripsOf(async () => (leases = await claimAll()));
      expect(leases).toHaveLength(BATCH);
      expect(trips).toBeLessThanOrEqual(db === 'postgres' ? 1 : 3);
    });

    it('extends the leases of a batch (a heartbeat) in one round trip', async () => {
      await accept(BATCH);
      const leases = await claimAll();
      let extended = new Set<string>();
      const trips = await tripsOf(
        async () => (extended = await store.completion.extendLeases(leases, Date.now() + LEASE_MS)),
      );
      expect(extended.size).toBe(BATCH);
      expect(trips).toBe(1);
    });

    it('deletes a delivered batch (a completion) in one round trip', async () => {
      await accept(BATCH);
      const leases = await claimAll();
      let deleted = 0;
      const trips = await tripsOf(async () => (deleted = await store.completion.deleteOwned(leases)));
      expect(deleted).toBe(BATCH);
      expect(trips).toBe(1);
    });
  });
}
