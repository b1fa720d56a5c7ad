/**
 * A broker whose clock is off by more than a lease, beside Holdfast on ACTIVEMQ_LOCK (the lease
 * pairing). ActiveMQ's lease-database-locker writes `TIME = its JVM clock + lease` and compares
 * with its JVM clock; it measures the database's clock only when `maxAllowableDiffFromDBTime > 0`
 * (ActiveMQ's default is 0). Holdfast's times are the database's. The broker's JVM runs under
 * libfaketime (only its wall clock is off). PostgreSQL only: what it shows does not depend on the
 * database. In the soak list.
 */
import { monotonicMillis } from '@holdfast/core/kit';
import { testDatabases, uniqueTablePrefix } from '@holdfast/testing';
import { existsSync } from 'node:fs';
import { LockerCluster, overlaps } from '../locker/cluster';
import { jdbcUrl } from '../interop/support/java';
import { ActiveMqBroker } from './support/broker';
import { activemqLockTable } from './support/lock-table';

const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const INTERVAL = 2_000;
const KEEP_ALIVE = 500;
const SKEW = '10s';
const PORT = 25545;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

jest.setTimeout(180_000);

const onPostgres = testDatabases().includes('postgres') ? describe : describe.skip;

onPostgres('ActiveMQ broker with a skewed clock beside Holdfast (lease pairing, PostgreSQL)', () => {
  it('has libfaketime to skew the JVM with (CI installs Debian faketime)', () => {
    expect(existsSync(LIBFAKETIME)).toBe(true);
  });

  /** Holdfast's master h1, then a broker whose clock is `skew`; returns every term, h1's demotions and the broker. */
  async function run(skew: string, maxAllowableDiffFromDBTime: number, settle: number) {
    const prefix = uniqueTablePrefix('amq_skew');
    const lock = await activemqLockTable('postgres', prefix);
    const cluster = new LockerCluster();
    const broker = new ActiveMqBroker({
      name: 'skewed',
      port: PORT,
      store: {
        kind: 'jdbc',
        db: 'postgres',
        url: jdbcUrl('postgres'),
        tablePrefix: prefix,
        locker: 'lease',
        maxAllowableDiffFromDBTime,
      },
      lockAcquireSleepInterval: INTERVAL,
      lockKeepAlivePeriod: KEEP_ALIVE,
      faketime: skew,
    });
    const holdfast = {
      name: 'h1',
      db: 'postgres' as const,
      prefix,
      interval: INTERVAL,
      keepAlive: KEEP_ALIVE,
      locker: { type: 'lease-database' as const },
      lockTableName: 'ACTIVEMQ_LOCK',
      lockName: '1',
    };
    try {
      const t0 = monotonicMillis();
      cluster.spawn(holdfast);
      await cluster.next('h1', 'acquired', 60_000, t0);
      broker.start();
      await broker.line(/attempting to acquire exclusive lease/, 60_000);
      await sleep(settle);
      const terms = [...cluster.terms(), ...broker.terms()];
      const lost = cluster.get('h1').messages.filter((m) => m.type === 'lost');
      return { terms, broker, both: overlaps(terms), log: broker.log(), lost };
    } finally {
      await cluster.closeAll();
      await broker.destroy();
      await lock.drop();
    }
  }

  it(`maxAllowableDiffFromDBTime 0 (ActiveMQ's default), broker clock +${SKEW}: the broker takes Holdfast's live lease, two masters until Holdfast's next renewal`, async () => {
    const { broker, log, lost } = await run(`+${SKEW}`, 0, 3 * INTERVAL);
    // With 0 the broker never reads the database's clock.
    expect(log).not.toMatch(/diff adjust from db/);
    // It took a lease Holdfast had renewed less than a keep-alive before (a lease of 2 s, renewed
    // every 0.5 s, still 1.5 s from its end by the database clock): Holdfast's master learned it at
    // its next renewal, which found BROKER_NAME changed, and demoted. Until then both were master.
    expect(broker.wasMaster()).toBe(true);
    expect(lost.map((m) => (m as { reason: string }).reason)).toEqual(['keep-alive-false']);
    console.log(
      `[activemq skew] +${SKEW}, maxAllowableDiffFromDBTime 0: the broker took Holdfast's live lease`,
    );
  });

  it(`maxAllowableDiffFromDBTime 1000, broker clock +${SKEW}: the broker measures the database clock and stays slave`, async () => {
    const { both, broker, log, lost } = await run(`+${SKEW}`, 1_000, 3 * INTERVAL);
    expect(log).toMatch(/diff adjust from db: -\d{4,}/);
    expect(broker.wasMaster()).toBe(false);
    expect(lost).toEqual([]);
    expect(both).toEqual([]);
  });
});
