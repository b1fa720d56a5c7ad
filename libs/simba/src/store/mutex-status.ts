import {
  SchemaManager,
  StatementBinder,
  tableName,
  toNumber,
  type SqlClient,
  type SqlDialect,
  type Statement,
} from '@holdfast/core/kit';
import { TIMELINE_MARKER } from './failover-grace';
import { MEMBER_ROW_PREFIX, SIMBA_MUTEX_TABLE } from './simba-mutex.table';

/** A simba mutex as its row says right now: who owns it and until when (database clock). */
export interface MutexStatus {
  mutex: string;
  owner: string | null;
  fencingToken: number;
  state: 'owned' | 'transition' | 'free';
  /** ms until ttl_at (owned) or transition_at (transition); null when free. */
  expiresInMs: number | null;
}

/**
 * Every row of the simba mutex table under `prefix`, on the database clock (`databaseNow`, epoch
 * ms); `mutexes` is null when the table does not exist. Simba's own reading of its table, for
 * the dashboard and the CLI.
 */
export async function readMutexStatus(
  sql: SqlClient,
  prefix: string,
): Promise<{ databaseNow: number; mutexes: MutexStatus[] | null }> {
  const now = await sql.nowMillis();
  const table = tableName(prefix, SIMBA_MUTEX_TABLE.name);
  if (!(await new SchemaManager(sql).tableExists(table))) return { databaseNow: now, mutexes: null };
  const rows = await sql.query(selectMutexStatus(table, sql.dialect));
  return { databaseNow: now, mutexes: rows.map((row) => toMutexStatus(row, now)) };
}

/**
 * The rows `toMutexStatus` reads, from the simba mutex table `table` (prefix included), the
 * names it leaves out bound through `dialect`'s placeholders.
 */
export function selectMutexStatus(table: string, dialect: Pick<SqlDialect, 'placeholder'>): Statement {
  // The failover grace's timeline marker and the spread groups' member rows are rows of the table, not mutexes.
  const select = `SELECT mutex, owner_id, acquired_at, ttl_at, transition_at FROM ${table}`;
  const b = new StatementBinder(dialect);
  return b.statement(
    `${select} WHERE mutex <> ${b.bind(TIMELINE_MARKER)} AND mutex NOT LIKE ${b.bind(`${MEMBER_ROW_PREFIX}%`)} ORDER BY mutex`,
  );
}

/** One row of `selectMutexStatus` as its status at `now` (database clock, epoch ms). */
export function toMutexStatus(row: Record<string, unknown>, now: number): MutexStatus {
  const ttlAt = toNumber(row.ttl_at);
  const transitionAt = toNumber(row.transition_at);
  // CHAR(32) (Simba's own DDL) pads with spaces on PostgreSQL.
  const owner = row.owner_id ? String(row.owner_id).trimEnd() || null : null;
  const state = !owner ? 'free' : ttlAt > now ? 'owned' : transitionAt > now ? 'transition' : 'free';
  return {
    mutex: String(row.mutex),
    owner: state === 'free' ? null : owner,
    // The fencing token is the grant's database time (README, 'Fencing tokens').
    fencingToken: toNumber(row.acquired_at),
    state,
    expiresInMs: state === 'owned' ? ttlAt - now : state === 'transition' ? transitionAt - now : null,
  };
}
