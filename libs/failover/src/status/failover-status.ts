import { SchemaManager, tableName, type SqlClient } from '@holdfast/core/kit';
import { FAILOVER_STORE_TABLE } from '../store/failover-store.table';
import { selectFailoverStatus, toFailoverStatus, type FailoverStatus } from '../store/failover-status';

export type { FailoverStatus };

/** Where the SQL failover store's table is: FailoverModule's `store.tablePrefix` (none by default). */
export interface FailoverTableOptions {
  tablePrefix?: string;
}

/** What the SQL failover store's table says right now, on the database clock. */
export interface FailoverStoreStatus {
  databaseNow: number;
  /** The table read, prefix included. */
  table: string;
  /** The live entries of each failover, by name; null: no table under the prefix. */
  entries: FailoverStatus[] | null;
}

/**
 * The failover store's status read-model: per failover, its live entries and the newest one's
 * AS_OF, read with the store's own statement. Read-only; a missing table is `entries: null`.
 * For the CLI, the dashboard and operators' tools.
 */
export async function readFailoverStatus(
  sql: SqlClient,
  options: FailoverTableOptions = {},
  /** The database clock (epoch ms) to read against: one clock for several read-models. Default: read now. */
  at?: { databaseNow: number },
): Promise<FailoverStoreStatus> {
  const table = failoverTable(options);
  const databaseNow = at?.databaseNow ?? (await sql.nowMillis());
  if (!(await new SchemaManager(sql).tableExists(table))) return { databaseNow, table, entries: null };
  const rows = await sql.query(selectFailoverStatus(sql.dialect, table, databaseNow));
  return { databaseNow, table, entries: rows.map((row) => toFailoverStatus(row, sql.dialect)) };
}

/** The SQL store's table under `tablePrefix` (for messages that name it). */
export function failoverTable(options: FailoverTableOptions = {}): string {
  return tableName(options.tablePrefix ?? '', FAILOVER_STORE_TABLE.name);
}
