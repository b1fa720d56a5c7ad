import {
  Catalog,
  createIndexSql,
  createTableSql,
  sqlDialect,
  tableName,
  type Dialect,
} from '@holdfast/core/kit';
import { COR_MESSAGE_TABLE } from './cor-message.table';
import { FAR_FUTURE } from './next-retry';
import { renameTable } from './inbox-sql.dialect';

/** The previous Holdfast layout kept times as BIGINT epoch ms with two far-future sentinels. */
const OLD_PAUSED = 8_000_000_000_000_000;
const OLD_PARKED = 9_000_000_000_000_000;

/**
 * The statements that turn a COR_MESSAGE of the previous Holdfast layout (BIGINT times, ERROR cut
 * to 4000 characters, sentinels in NEXT_RETRY) into the seed's layout, keeping every message:
 * a new table of the current layout is filled from the old one in one INSERT … SELECT, the old
 * one is dropped and the new one takes its name, then the indexes are created.
 *
 * - INSERTED, EXPIRATION, NEXT_RETRY: epoch ms → timestamps (the same instants, to the ms).
 * - paused (NEXT_RETRY = 8e15) → NEXT_RETRY = FAR_FUTURE, as camunda-bpm-correlate pauses.
 * - parked (NEXT_RETRY = 9e15) → NEXT_RETRY NULL; RETRIES is above maxRetries already (parked).
 * - PAYLOAD_ENCODING 'json' → 'jackson', so a camunda-bpm-correlate reader decodes it.
 *
 * Run them in one transaction where the database has transactional DDL (PostgreSQL, SQLite).
 */
export function corMessageConversionSql(dialect: Dialect, prefix = ''): string[] {
  const table = tableName(prefix, COR_MESSAGE_TABLE.name);
  const staging = { ...COR_MESSAGE_TABLE, name: `${COR_MESSAGE_TABLE.name}_HF_NEW` };
  const next = tableName(prefix, staging.name);
  const d = sqlDialect(dialect);
  // The new table's time columns are the dialect's default timestamp type (DATETIME on MySQL).
  const t = d.timestampSql();
  const time = (c: string) => `CASE WHEN ${c} IS NULL THEN NULL ELSE ${t.fromMillis(c)} END`;
  const nextRetry =
    `CASE WHEN NEXT_RETRY IS NULL THEN NULL WHEN NEXT_RETRY >= ${OLD_PARKED} THEN NULL ` +
    `WHEN NEXT_RETRY >= ${OLD_PAUSED} THEN ${t.literal(FAR_FUTURE)} ELSE ${t.fromMillis('NEXT_RETRY')} END`;
  return [
    createTableSql(dialect, staging, prefix),
    `INSERT INTO ${next} (ID, PAYLOAD_ENCODING, PAYLOAD_TYPE_NAMESPACE, PAYLOAD_TYPE_NAME, PAYLOAD_TYPE_REVISION, PAYLOAD, ` +
      `INSERTED, TTL_DURATION, EXPIRATION, RETRIES, NEXT_RETRY, ERROR) ` +
      `SELECT ID, CASE WHEN PAYLOAD_ENCODING = 'json' THEN 'jackson' ELSE PAYLOAD_ENCODING END, PAYLOAD_TYPE_NAMESPACE, ` +
      `PAYLOAD_TYPE_NAME, PAYLOAD_TYPE_REVISION, PAYLOAD, ${t.fromMillis('INSERTED')}, TTL_DURATION, ` +
      `${time('EXPIRATION')}, RETRIES, ${nextRetry}, ERROR FROM ${table}`,
    `DROP TABLE ${table}`,
    renameTable(d, next, table),
    ...(COR_MESSAGE_TABLE.indexes ?? []).map((index) =>
      createIndexSql(dialect, COR_MESSAGE_TABLE, index, prefix),
    ),
  ];
}

/**
 * True when `<prefix>COR_MESSAGE` exists with the previous layout (INSERTED is an integer).
 * `query` returns rows (a TypeORM QueryRunner's `query`).
 */
export async function hasEpochMillisLayout(
  dialect: Dialect,
  query: (sql: string, params?: unknown[]) => Promise<unknown>,
  prefix = '',
): Promise<boolean> {
  const table = tableName(prefix, COR_MESSAGE_TABLE.name);
  const catalog = new Catalog(
    sqlDialect(dialect),
    async (s) => (await query(s.sql, [...s.params])) as unknown[],
  );
  const inserted = await catalog.column(table, 'INSERTED');
  return /int/i.test(inserted?.rawType ?? '');
}
