import { createTestDataSource } from '@holdfast/testing';
import type { DataSource } from 'typeorm';

export type ServerDatabase = 'postgres' | 'mariadb';

/** ActiveMQ's tables under a `statements.tablePrefix`, as its JDBC store creates them. */
const ACTIVEMQ_TABLES = ['ACTIVEMQ_MSGS', 'ACTIVEMQ_ACKS', 'ACTIVEMQ_LOCK'];

/**
 * The lock table as ActiveMQ's DDL makes it (Statements.getCreateLockSchemaStatements), made before
 * either side starts so Holdfast's schema check finds it (the broker's own create then finds it
 * in place, which it accepts). `drop()` removes every table the broker created under the prefix.
 */
export async function activemqLockTable(
  db: ServerDatabase,
  prefix: string,
): Promise<{ dataSource: DataSource; table: string; drop(): Promise<void> }> {
  const dataSource = await createTestDataSource(db);
  const table = `${prefix}ACTIVEMQ_LOCK`;
  await dataSource.query(
    `CREATE TABLE ${table}( ID BIGINT NOT NULL, TIME BIGINT, BROKER_NAME VARCHAR(250), PRIMARY KEY (ID) )`,
  );
  await dataSource.query(`INSERT INTO ${table}(ID) VALUES (1)`);
  return {
    dataSource,
    table,
    drop: async () => {
      for (const name of ACTIVEMQ_TABLES) {
        await dataSource.query(`DROP TABLE IF EXISTS ${prefix}${name}`).catch(() => undefined);
      }
      await dataSource.destroy();
    },
  };
}
