import type { INestApplicationContext } from '@nestjs/common';
import {
  createTestDataSource,
  TcpProxy,
  testDatabases,
  uniqueTablePrefix,
  type TestDatabase,
} from '@holdfast/testing';
import type { DataSource } from 'typeorm';
import { sqlDialect, type SqlClient } from '@holdfast/core/kit';
import { MutexContendServiceFactory, MutexStatementTimeoutError, type MutexContendService } from '../src';
import { MutexQueryResolver } from '../src/internal';
import { MutexRepository } from '../src/mutex/mutex.repository';
import { createSimbaApp, freshMutex, RecordingContender, waitUntil } from './simba-test.support';

const SERVER_PORT: Record<Exclude<TestDatabase, 'sqlite'>, number> = { postgres: 5432, mariadb: 3306 };

describe('client-side statement timeout', () => {
  it('a call on a connection that never answers fails after the statement timeout', async () => {
    // Stands in for a connection that hangs: the point here is the client-side timer, not SQL.
    const never = new Promise<never>(() => undefined);
    const hung = {
      dialect: sqlDialect('postgres'),
      transaction: () => never,
      query: () => never,
    } as unknown as SqlClient;
    const repository = new MutexRepository(hung, new MutexQueryResolver(sqlDialect('postgres'), ''), 150);
    const started = performance.now();
    const error = await repository.acquire('m', 'me', 1_000, 1_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MutexStatementTimeoutError);
    expect((error as Error).message).toContain(
      "acquire of mutex 'm' got no answer from the database within 150 ms",
    );
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });
});

/** SQLite has no network connection to cut; the outage test runs on the server databases. */
const servers = testDatabases().filter((db): db is 'postgres' | 'mariadb' => db !== 'sqlite');

for (const db of servers) {
  describe(`database outage through a TCP proxy [${db}]`, () => {
    const prefix = uniqueTablePrefix(`out_${db}`);
    let proxy: TcpProxy;
    let viaProxy: DataSource;
    let direct: DataSource;
    let ownerApp: INestApplicationContext;
    let standbyApp: INestApplicationContext;
    const services: MutexContendService[] = [];

    beforeAll(async () => {
      proxy = new TcpProxy(SERVER_PORT[db]);
      await proxy.start();
      viaProxy = await createTestDataSource(db, { port: proxy.port, poolSize: 4 });
      direct = await createTestDataSource(db);
      const options = { ttl: '1s', transition: '1500ms', standbyPoll: '100ms' };
      ownerApp = await createSimbaApp({ db, dataSource: viaProxy, prefix, sql: undefined as never }, options);
      standbyApp = await createSimbaApp({ db, dataSource: direct, prefix, sql: undefined as never }, options);
    });

    afterAll(async () => {
      await proxy.stop();
      await Promise.all(
        services.map((s) => (s.status === 'RUNNING' ? s.stop().catch(() => undefined) : undefined)),
      );
      await ownerApp?.close();
      await standbyApp?.close();
      await direct.query(`DROP TABLE IF EXISTS ${prefix}simba_mutex`).catch(() => undefined);
      await Promise.all([viaProxy.destroy().catch(() => undefined), direct.destroy()]);
    });

    it.each([
      ['blackhole', (p: TcpProxy) => p.blackhole()],
      ['cut', (p: TcpProxy) => p.cut()],
    ])('%s: the owner steps down (onReleased) before the standby can acquire', async (_kind, outage) => {
      proxy.restore();
      const mutex = freshMutex('outage');
      const owner = new RecordingContender(mutex);
      const standby = new RecordingContender(mutex);
      const ownerService = ownerApp.get(MutexContendServiceFactory).createMutexContendService(owner);
      const standbyService = standbyApp.get(MutexContendServiceFactory).createMutexContendService(standby);
      services.push(ownerService, standbyService);
      ownerService.start();
      await waitUntil(() => ownerService.isOwner, 5_000, 'the proxied instance acquires');
      standbyService.start();

      let ownerReleasedAt = 0;
      let lastBelievedOwnerAt = 0;
      let standbyAcquiredAt = 0;
      const watch = setInterval(() => {
        const now = performance.now();
        if (ownerService.isOwner) lastBelievedOwnerAt = now;
        if (!ownerReleasedAt && owner.count('released') > 0) ownerReleasedAt = now;
        if (!standbyAcquiredAt && standbyService.isOwner) standbyAcquiredAt = now;
      }, 5);
      try {
        outage(proxy);
        await waitUntil(() => standbyAcquiredAt > 0, 10_000, 'the standby takes over');
      } finally {
        clearInterval(watch);
      }
      expect(owner.count('released')).toBe(1);
      expect(ownerReleasedAt).toBeGreaterThan(0);
      expect(ownerReleasedAt).toBeLessThan(standbyAcquiredAt);
      expect(lastBelievedOwnerAt).toBeLessThan(standbyAcquiredAt);
      expect(ownerService.isOwner).toBe(false);
      expect(standby.tokens()[0]).toBeGreaterThan(owner.tokens()[0]);
      await standbyService.stop();
    });
  });
}
