/**
 * The tables as the Java systems create them (their DDL, not Holdfast's migrations), per server
 * dialect. The README's section "Sharing tables with the Java systems" shows the same statements.
 */
export type ServerDatabase = 'postgres' | 'mariadb';

/**
 * Simba's `init-simba-mysql.sql` (owner_id CHAR(32), no defaults); on PostgreSQL the same shape
 * with signed types, as PostgreSQL has no UNSIGNED.
 */
export function simbaMutexDdl(db: ServerDatabase, table: string): string {
  if (db === 'mariadb') {
    return (
      `create table ${table} (` +
      `mutex varchar(66) not null primary key comment 'mutex name', ` +
      'acquired_at bigint unsigned not null, ttl_at bigint unsigned not null, ' +
      'transition_at bigint unsigned not null, owner_id char(32) not null, version int unsigned not null)'
    );
  }
  return (
    `create table ${table} (` +
    'mutex varchar(66) not null primary key, acquired_at bigint not null, ttl_at bigint not null, ' +
    'transition_at bigint not null, owner_id char(32) not null, version int not null)'
  );
}

/**
 * camunda-bpm-correlate's COR_MESSAGE (its documented layout: ID unique, the three instants as
 * timestamps, ERROR unbounded text) on PostgreSQL (TIMESTAMP WITH TIME ZONE, BYTEA, TEXT) and
 * MariaDB (DATETIME(3), which holds its FAR_FUTURE pause marker; LONGBLOB, LONGTEXT).
 */
export function corMessageDdl(db: ServerDatabase, table: string): string {
  const [varchar, binary, timestamp, text] =
    db === 'postgres'
      ? ['VARCHAR', 'BYTEA', 'TIMESTAMP WITH TIME ZONE', 'TEXT']
      : ['VARCHAR', 'LONGBLOB', 'DATETIME(3)', 'LONGTEXT'];
  return (
    `CREATE TABLE ${table} (` +
    `ID ${varchar}(64) UNIQUE NOT NULL, ` +
    `PAYLOAD_ENCODING ${varchar}(64) NOT NULL, ` +
    `PAYLOAD_TYPE_NAMESPACE ${varchar}(128) NOT NULL, ` +
    `PAYLOAD_TYPE_NAME ${varchar}(128) NOT NULL, ` +
    `PAYLOAD_TYPE_REVISION ${varchar}(64), ` +
    `PAYLOAD ${binary}, ` +
    `INSERTED ${timestamp} NOT NULL, ` +
    `TTL_DURATION ${varchar}(32), ` +
    `EXPIRATION ${timestamp}, ` +
    'RETRIES INTEGER NOT NULL, ' +
    `NEXT_RETRY ${timestamp}, ` +
    `ERROR ${text})`
  );
}
