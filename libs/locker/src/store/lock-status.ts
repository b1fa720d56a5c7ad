import {
  SchemaManager,
  StatementBinder,
  tableName,
  toNumber,
  type SqlClient,
  type SqlDialect,
  type Statement,
} from '@holdfast/core/kit';
import { HOLDFAST_LOCK_TABLE } from './holdfast-lock.table';
import { FAILOVER_GRACE_HOLDER, TIMELINE_MARKER } from './lease-failover-grace';

/** A lock row: its master's name and its TIME against the database clock. */
export interface LockStatus {
  lock: string;
  master: string | null;
  /** TIME − now in ms: > 0 a lease with that long to run, ≤ 0 the age of the last keep-alive. */
  timeFromNowMs: number | null;
}

/**
 * The statement that reads every lock row of `table` (HOLDFAST_LOCK under its prefix). The
 * timeline marker of the failover grace is a row, not a lock: left out (by its holder, a string
 * column on every layout), the marker's name bound through `dialect`'s placeholders.
 */
export function selectLockStatus(table: string, dialect: Pick<SqlDialect, 'placeholder'>): Statement {
  const select = `SELECT ID AS lock_id, BROKER_NAME AS broker_name, TIME AS lock_time FROM ${table}`;
  const b = new StatementBinder(dialect);
  return b.statement(
    `${select} WHERE BROKER_NAME IS NULL OR BROKER_NAME <> ${b.bind(TIMELINE_MARKER)} ORDER BY ID`,
  );
}

/** One row of `selectLockStatus`, against the database clock's `now` (epoch ms). */
export function toLockStatus(row: Record<string, unknown>, now: number): LockStatus {
  const time = row.lock_time === null || row.lock_time === undefined ? null : toNumber(row.lock_time);
  return {
    lock: String(row.lock_id),
    // A row in its failover grace has no master (its TIME is when the grace was detected).
    master: row.broker_name && row.broker_name !== FAILOVER_GRACE_HOLDER ? String(row.broker_name) : null,
    timeFromNowMs: time === null ? null : time - now,
  };
}

/**
 * Every row of HOLDFAST_LOCK under `prefix` on the database clock, or null when the table does
 * not exist. The locker's own reading of its table, for the dashboard and the CLI.
 */
export async function readLockStatus(sql: SqlClient, prefix: string): Promise<LockStatus[] | null> {
  const table = tableName(prefix, HOLDFAST_LOCK_TABLE.name);
  if (!(await new SchemaManager(sql).tableExists(table))) return null;
  const now = await sql.nowMillis();
  const rows = await sql.query(selectLockStatus(table, sql.dialect));
  return rows.map((r) => toLockStatus(r, now));
}
