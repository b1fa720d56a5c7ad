import { Test, type TestingModule } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import { sqlClientFor, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  TcpProxy,
  testServerDatabases,
  uniqueTablePrefix,
  testServerPort,
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
const BATCH = 50;
const LEASE_MS = 30_000;

for (const db of testServerDatabases()) {
  describe(`inbox statements through a proxy: round trips [${db}]`, () => {
    let proxy: TcpProxy;
    let dataSource: DataSource;
    let app: TestingModule;
    let store: CorMessageStore;
    let acceptor: MessageAcceptor;
    const prefix = uniqueTablePrefix('rt');

    beforeAll(async () => {
      proxy = new TcpProxy(testServerPort(db));
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
        await sqlClientFor(dataSource).execute(statement(`DROP TABLE IF EXISTS ${prefix}COR_MESSAGE`));
        await dataSource.destroy();
      }
      await proxy?.stop();
    });

    const accept = (n: number) =>
      acceptor.acceptAll(
        Array.from({ length: n }, (_, i) => ({ type: { namespace: 'rt', name: 'm' }, payload: { i } })),
      );

    async function claimAll(): Promise<Lease[]> {
      const { rows } = await store.claims.claim(BATCH, undefined, LEASE_MS);
      return rows.map((r) => ({ id: r.id, until: r.nextRetry! }));
    }

    it(`claims a batch in ${db === 'postgres' ? 'one round trip' : 'at most 3 round trips'}`, async () => {
      await accept(BATCH);
      await claimAll(); // connections opened and statements planned before counting
      await accept(BATCH);
      let leases: Lease[] = [];
      const trips = await proxy.roundTripsOf(async () => (leases = await claimAll()));
      expect(leases).toHaveLength(BATCH);
      expect(trips).toBeLessThanOrEqual(db === 'postgres' ? 1 : 3);
    });

    it(`claims past rows another transaction holds in ${db === 'postgres' ? 'one round trip' : 'at most 5 round trips'}`, async () => {
      // Every other due message is locked by another transaction (another node's claim), so the
      // claim's candidates come back half taken, round after round. MariaDB asked for the missing
      // ones a few keys at a time, down to one key a round trip (10 round trips here); a round now
      // locks all its candidates at once.
      await accept(2 * BATCH);
      const table = `${prefix}COR_MESSAGE`;
      const direct = await createTestDataSource(db);
      try {
        const due = await direct.query(
          `SELECT ID AS id FROM ${table} WHERE NEXT_RETRY IS NULL ORDER BY INSERTED, ID`,
        );
        const held = (due as { id: string }[]).filter((_, i) => i % 2 === 0).map((r) => r.id);
        let leases: Lease[] = [];
        let trips = 0;
        // READ COMMITTED and by primary key, so that InnoDB locks these rows and no others.
        await direct.transaction('READ COMMITTED', async (tx) => {
          const list = held.map((_, i) => (db === 'postgres' ? `$${i + 1}` : '?')).join(', ');
          const byKey = db === 'postgres' ? '' : ' FORCE INDEX (PRIMARY)';
          await tx.query(`SELECT ID FROM ${table}${byKey} WHERE ID IN (${list}) FOR UPDATE`, held);
          trips = await proxy.roundTripsOf(async () => (leases = await claimAll()));
        });
        expect(leases).toHaveLength(BATCH);
        expect(leases.filter((l) => held.includes(l.id))).toEqual([]);
        expect(trips).toBeLessThanOrEqual(db === 'postgres' ? 1 : 5);
      } finally {
        await direct.destroy();
      }
    });

    it('extends the leases of a batch (a heartbeat) in one round trip', async () => {
      await accept(BATCH);
      const leases = await claimAll();
      let extended = new Set<string>();
      const trips = await proxy.roundTripsOf(
        async () => (extended = await store.completion.extendLeases(leases, Date.now() + LEASE_MS)),
      );
      expect(extended.size).toBe(BATCH);
      expect(trips).toBe(1);
    });

    it('deletes a delivered batch (a completion) in one round trip', async () => {
      await accept(BATCH);
      const leases = await claimAll();
      let deleted = 0;
      const trips = await proxy.roundTripsOf(
        async () => (deleted = await store.completion.deleteOwned(leases)),
      );
      expect(deleted).toBe(BATCH);
      expect(trips).toBe(1);
    });
  });
}
