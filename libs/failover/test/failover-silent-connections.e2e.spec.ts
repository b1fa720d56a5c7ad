import { Injectable } from '@nestjs/common';
import { monotonicMillis, sleep, sqlClientFor, statement } from '@holdfast/core/kit';
import { createTestDataSource, testServerDatabases, uniqueTablePrefix, waitUntil } from '@holdfast/testing';
import { Failover, getFailoverStoreToken } from '@holdfast/failover';
import type { SqlFailoverStore } from '../src/internal';
import { startFailoverApp, withAppBehindProxy } from './support/failover-app';

class UpstreamDown extends Error {}

@Injectable()
class Quotes {
  up = true;
  version = 0;

  @Failover({ name: 'quote', expiry: '1h' })
  async quote(code: string): Promise<{ code: string; version: number }> {
    if (!this.up) throw new UpstreamDown(`no quote for ${code}`);
    return { code, version: this.version };
  }
}

const STORE_TIMEOUT = 300;
/** The store in use again after the drop: a few bounds, the breaker's probe, 3 s for a busy machine. */
const RECOVERY_BOUND = 15_000;

/**
 * A connection that goes silent for good (#43): the SQL store reaches the server through a
 * TcpProxy, every connection of the application's pool is open, and all of them go silent for
 * good while new ones pass (`blackholeOpen`: a firewall or NAT that lost its state). Calls stay
 * bounded by storeTimeout throughout, and the store recovers on new connections: a value kept
 * after the drop is what a call whose upstream fails gets back. Before, a store statement on a
 * silenced connection kept it checked out for good; with the whole pool silenced the store never
 * answered again. PostgreSQL and MariaDB.
 */
describe.each(testServerDatabases())(
  'the failover store whose open connections go silent for good [%s]',
  (db) => {
    const prefix = uniqueTablePrefix('silent');
    afterAll(async () => {
      const dataSource = await createTestDataSource(db);
      await sqlClientFor(dataSource)
        .execute(statement(`DROP TABLE IF EXISTS ${prefix}FAILOVER_STORE`))
        .catch(() => undefined);
      await dataSource.destroy();
    });

    it('keeps calls bounded and is used again on new connections', async () => {
      await withAppBehindProxy(
        { db, prefix },
        (viaProxy) =>
          startFailoverApp(viaProxy, { async: false, storeTimeout: STORE_TIMEOUT }, { providers: [Quotes] }),
        async (app, proxy) => {
          const quotes = app.get(Quotes);
          // The store's statements are bounded by storeTimeout; its upkeep (cleanup, the table's
          // check, clock readings) by a longer bound of its own.
          const store = app.get<SqlFailoverStore>(getFailoverStoreToken());
          expect(store.sql.statementTimeout).toBe(STORE_TIMEOUT);
          expect(store.maintenanceSql.statementTimeout).toBeGreaterThan(STORE_TIMEOUT);
          // Calls at once: every connection of the application's pool is open.
          await Promise.all(['A', 'B', 'C', 'D'].map((code) => quotes.quote(code)));
          const silenced = proxy.connections;
          proxy.blackholeOpen({ passCloses: false });
          const dropAt = monotonicMillis();

          let slowest = 0;
          const call = async <T>(work: () => Promise<T>): Promise<T | Error> => {
            const started = monotonicMillis();
            try {
              return await work();
            } catch (error) {
              return error as Error;
            } finally {
              slowest = Math.max(slowest, monotonicMillis() - started);
            }
          };
          // The upstream answers with a new version every call; then it fails, and the store must
          // serve the last version it kept.
          const recovered = await waitUntil(
            async () => {
              quotes.up = true;
              quotes.version++;
              const kept = quotes.version;
              await call(() => quotes.quote('A'));
              quotes.up = false;
              const served = await call(() => quotes.quote('A'));
              await sleep(100);
              return !(served instanceof Error) && served.version === kept ? kept : undefined;
            },
            {
              timeout: RECOVERY_BOUND,
              interval: 0,
              message: `the store in use again within ${RECOVERY_BOUND} ms`,
            },
          );
          const recoveredMs = monotonicMillis() - dropAt;
          console.log(
            `[failover silent ${db}] ${silenced} connection(s) silenced; the store kept and served version ` +
              `${recovered} ${recoveredMs} ms after the drop; the slowest call took ${slowest} ms`,
          );
          // Never slow: a call waits for the store at most about storeTimeout, twice (write, read).
          expect(slowest).toBeLessThan(2 * STORE_TIMEOUT + 1_000);
          expect(proxy.connections).toBeGreaterThan(proxy.silencedConnections);
        },
      );
    }, 60_000);
  },
);
