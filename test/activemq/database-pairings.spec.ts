/**
 * The database pairings, each beside a live ActiveMQ broker on a JDBC store (its own tables under a
 * unique prefix of the test database):
 * - lease: ActiveMQ's lease-database-locker and Holdfast's `lease-database` on `ACTIVEMQ_LOCK`;
 * - row: ActiveMQ's default database-locker (SELECT … FOR UPDATE held in a transaction) and
 *   Holdfast's `database` locker on the same row;
 * on PostgreSQL and MariaDB (whichever HOLDFAST_TEST_DATABASES selects). Two JVM starts per
 * pairing; in the soak list (npm run test:soak).
 */
import { testDatabases, uniqueTablePrefix } from '@holdfast/testing';
import { jdbcUrl } from '../interop/support/java';
import { activemqInstalled } from './support/broker';
import { activemqLockTable, type ServerDatabase } from './support/lock-table';
import { pairingScenario } from './support/pairing';

const SERVERS = testDatabases().filter((db): db is ServerDatabase => db !== 'sqlite');
/** One port per pairing (Jest may run this file beside the file pairing's, on 25540). */
const PORTS: Record<string, number> = {
  'lease/postgres': 25541,
  'lease/mariadb': 25542,
  'row/postgres': 25543,
  'row/mariadb': 25544,
};

jest.setTimeout(240_000);

describe('ActiveMQ broker beside Holdfast: the database pairings', () => {
  it('has the broker to run (CI installs Debian activemq)', () => {
    expect(activemqInstalled()).toBe(true);
  });

  for (const db of SERVERS) {
    it(`lease [${db}]: lease-database-locker / lease-database on ACTIVEMQ_LOCK: never two masters, SIGKILL both ways, a restarted broker stays slave, BROKER_NAME names the master`, async () => {
      // The lease is one lockAcquireSleepInterval on both sides, renewed every 500 ms.
      const interval = 2_000;
      const prefix = uniqueTablePrefix(`amq_lease_${db}`);
      const lock = await activemqLockTable(db, prefix);
      try {
        await pairingScenario({
          label: `lease/${db} (ActiveMQ lease-database-locker / Holdfast lease-database)`,
          interval,
          holdfast: {
            db,
            prefix,
            interval,
            keepAlive: 500,
            locker: { type: 'lease-database' },
            lockTableName: 'ACTIVEMQ_LOCK',
            lockName: '1',
          },
          broker: (name) => ({
            name,
            port: PORTS[`lease/${db}`],
            store: { kind: 'jdbc', db, url: jdbcUrl(db), tablePrefix: prefix, locker: 'lease' },
            lockAcquireSleepInterval: interval,
            lockKeepAlivePeriod: 500,
          }),
          slaveLine: /failed to acquire lease\.\s+Sleeping/,
          finalCheck: async ({ instanceId }) => {
            const rows = await lock.dataSource.query(
              `SELECT BROKER_NAME AS holder FROM ${lock.table} WHERE ID = 1`,
            );
            expect(rows[0].holder ?? rows[0].HOLDER).toBe(instanceId);
          },
        });
      } finally {
        await lock.drop();
      }
    });

    it(`row [${db}]: database-locker / database on ACTIVEMQ_LOCK: never two masters, SIGKILL both ways, a restarted broker stays slave`, async () => {
      const interval = 1_000;
      const prefix = uniqueTablePrefix(`amq_row_${db}`);
      const lock = await activemqLockTable(db, prefix);
      try {
        await pairingScenario({
          label: `row/${db} (ActiveMQ database-locker / Holdfast database)`,
          interval,
          holdfast: {
            db,
            prefix,
            interval,
            keepAlive: 500,
            locker: { type: 'database' },
            lockTableName: 'ACTIVEMQ_LOCK',
            lockName: '1',
          },
          broker: (name) => ({
            name,
            port: PORTS[`row/${db}`],
            store: { kind: 'jdbc', db, url: jdbcUrl(db), tablePrefix: prefix, locker: 'row' },
            lockAcquireSleepInterval: interval,
            lockKeepAlivePeriod: 1_000,
          }),
          // With createTablesOnStartup (ActiveMQ's default) a broker started beside a master first waits in
          // its table creation (its INSERT of the lock row waits for the row lock; MariaDB gives up after
          // innodb_lock_wait_timeout and goes on), then in its locker: not master either way.
          slaveLine: /Using Persistence Adapter: JDBCPersistenceAdapter/,
        });
      } finally {
        await lock.drop();
      }
    });
  }
});
