import { SchemaManager, tableName, toNumber, type SqlClient } from '@holdfast/core/kit';
import { HOLDFAST_LOCK_TABLE } from './holdfast-lock.table';

/** A lock row: its master's name and its TIME against the database clock. */
export interface LockStatus {
  lock: string;
  master: string | null;
  /** TIME − now in ms: > 0 a lease with that long to run, ≤ 0 the age of the last keep-alive. */
  timeFromNowMs: number | null;
}

/**
 * Every row of HOLDFAST_LOCK under `prefix` on the database clock, or null when the table does
 * not exist. The locker's own reading of its table, for the dashboard and the CLI.
 */
export async function readLockStatus(sql: SqlClient, prefix: string): Promise<LockStatus[] | null> {
  const table = tableName(prefix, HOLDFAST_LOCK_TABLE.name);
  if (!(await new SchemaManager(sql).tableExists(table))) return null;
  const now = await sql.nowMillis();
  const rows = await sql.query(
    `SELECT ID AS lock_id, BROKER_NAME AS broker_name, TIME AS lock_time FROM ${table} ORDER BY ID`,
  );
  return rows.map((r) => {
    const time = r.lock_time === null || r.lock_time === undefined ? null : toNumber(r.lock_time);
    return {
      lock: String(r.lock_id),
      master: r.broker_name ? String(r.broker_name) : null,
      timeFromNowMs: time === null ? null : time - now,
    };
  });
}
