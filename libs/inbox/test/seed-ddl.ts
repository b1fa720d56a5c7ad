import type { TestDatabase } from '@holdfast/testing';

/**
 * Which of the seed's timestamp types a MySQL/MariaDB table uses: camunda-bpm-correlate's users
 * create it with DATETIME(3) or TIMESTAMP (the latter cannot hold a pause; see the README).
 */
export type SeedLayout = 'seed' | 'seed-timestamp';

/**
 * `COR_MESSAGE` as camunda-bpm-correlate's DDL creates it (its docs and test schema.sql), per
 * database: ID unique but not a declared primary key, every column without a default,
 * PAYLOAD_TYPE_NAMESPACE NOT NULL, timestamps (PostgreSQL TIMESTAMP WITH TIME ZONE, MariaDB
 * DATETIME(3) or TIMESTAMP(3), SQLite TIMESTAMP as SQLite stores it), ERROR the unbounded text
 * type. No index besides the unique ID.
 */
export function seedCorMessageDdl(db: TestDatabase, prefix: string, layout: SeedLayout = 'seed'): string[] {
  const table = `${prefix}COR_MESSAGE`;
  const types = {
    postgres: { ts: 'TIMESTAMP WITH TIME ZONE', blob: 'BYTEA', text: 'TEXT' },
    mariadb: {
      ts: layout === 'seed-timestamp' ? 'TIMESTAMP(3)' : 'DATETIME(3)',
      blob: 'LONGBLOB',
      text: 'TEXT',
    },
    sqlite: { ts: 'TIMESTAMP', blob: 'BLOB', text: 'CLOB' },
  }[db];
  const varchar = db === 'sqlite' ? 'VARCHAR2' : 'VARCHAR';
  return [
    `CREATE TABLE ${table} (
    ID                     ${varchar}(64) UNIQUE NOT NULL,
    PAYLOAD_ENCODING       ${varchar}(64) NOT NULL,
    PAYLOAD_TYPE_NAMESPACE ${varchar}(128) NOT NULL,
    PAYLOAD_TYPE_NAME      ${varchar}(128) NOT NULL,
    PAYLOAD_TYPE_REVISION  ${varchar}(64),
    PAYLOAD                ${types.blob},
    INSERTED               ${types.ts} NOT NULL,
    TTL_DURATION           ${varchar}(32),
    EXPIRATION             ${types.ts} NULL,
    RETRIES                INTEGER NOT NULL,
    NEXT_RETRY             ${types.ts} NULL,
    ERROR                  ${types.text}
)`,
  ];
}
