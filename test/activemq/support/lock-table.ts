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
  if (db === 'postgres') await dropLeftovers(dataSource);
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

/**
 * ActiveMQ's PostgreSQL DDL names its ACKS table's primary key `PK_ACTIVEMQ_ACKS`, whatever the
 * table prefix: an index name, one per schema. The broker of a run killed before its `drop()`
 * leaves that name behind, and every later broker's create then fails. The suites that start a
 * broker run one at a time (CI's second soak process), so a table holding the name when a suite
 * starts is a leftover: it goes, with the other tables of its prefix.
 */
async function dropLeftovers(dataSource: DataSource): Promise<void> {
  const held: { tablename: string }[] = await dataSource.query(
    `SELECT tablename FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'pk_activemq_acks'`,
  );
  for (const { tablename } of held) {
    const prefix = tablename.slice(0, tablename.length - 'activemq_acks'.length);
    if (!prefix.startsWith('hf_amq_')) continue; // not a test's
    for (const name of ACTIVEMQ_TABLES) await dataSource.query(`DROP TABLE IF EXISTS ${prefix}${name}`);
  }
}
