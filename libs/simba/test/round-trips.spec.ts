import type { DataSource } from 'typeorm';
import { SchemaManager, sqlClientFor } from '@holdfast/core/kit';
import { createTestDataSource, TcpProxy, uniqueTablePrefix } from '@holdfast/testing';
import { MutexQueryResolver } from '../src/internal';
import { SIMBA_MUTEX_TABLE } from '../src/internal';
import { MutexRepository } from '../src/mutex/mutex.repository';

/**
 * A Simba round (acquire or renew, then read the rows with the database clock) through a
 * TcpProxy that counts round trips: on MariaDB the transaction's opening goes with the UPDATE and
 * its COMMIT with the read. Counts only, no timing.
 */
// MariaDB only (left out of the run otherwise, see jest.config.js): the cut is MariaDB's.
describe('Simba round through a proxy: round trips [mariadb]', () => {
  let proxy: TcpProxy;
  let dataSource: DataSource;
  let repository: MutexRepository;
  const prefix = uniqueTablePrefix('rt');

  beforeAll(async () => {
    const url = new URL(process.env.HOLDFAST_TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test');
    proxy = new TcpProxy(Number(url.port || 3306), url.hostname);
    dataSource = await createTestDataSource('mariadb', { port: await proxy.start() });
    const sql = sqlClientFor(dataSource);
    await new SchemaManager(sql).apply(SIMBA_MUTEX_TABLE, prefix, 'create');
    repository = new MutexRepository(sql, new MutexQueryResolver(sql.dialect, prefix), 5_000);
  });

  afterAll(async () => {
    if (dataSource?.isInitialized) {
      await sqlClientFor(dataSource).execute(`DROP TABLE IF EXISTS ${prefix}simba_mutex`);
      await dataSource.destroy();
    }
    await proxy?.stop();
  });

  /** Until nothing new has passed the proxy for a while (a reset sent after the answer included). */
  async function quiet(): Promise<void> {
    for (let last = -1; last !== proxy.roundTrips;) {
      last = proxy.roundTrips;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }

  const round = (renew: boolean) =>
    repository.batch([
      { mutex: 'rt', contenderId: 'me', attempt: 'acquire', renew, ttl: 10_000, transition: 2_000 },
    ]);

  it('takes, then renews, a mutex in 2 round trips each (6 one statement at a time)', async () => {
    const counts: number[] = [];
    const owners: (string | undefined)[] = [];
    await round(false); // the row exists and the pool's connection is open before counting
    for (const renew of [false, true, true]) {
      await quiet();
      proxy.resetRoundTrips();
      const { rows } = await round(renew);
      await quiet();
      counts.push(proxy.roundTrips);
      owners.push(rows.get('rt')?.ownerId);
    }
    expect(owners).toEqual(['me', 'me', 'me']);
    expect(counts).toEqual([2, 2, 2]);
  });
});
