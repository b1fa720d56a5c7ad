import { SchemaManager, TIMELINE_MARKER, tableName, toNumber, type SqlClient } from '@holdfast/core/kit';
import { MutexQueryResolver } from '../store/mutex-query.resolver';
import { selectMutexStatus, toMutexStatus, type MutexStatus } from '../store/mutex-status';
import { SIMBA_MUTEX_TABLE } from '../store/simba-mutex.table';

export type { MutexStatus };

/** Where Simba's table is: SimbaModule's `tablePrefix` (none by default). */
export interface SimbaTableOptions {
  tablePrefix?: string;
}

/** What Simba's table says right now, on the database clock. */
export interface SimbaStatus {
  /** The database clock, epoch ms, that `expiresInMs` counts from. */
  databaseNow: number;
  /** The table read, prefix included. */
  table: string;
  /** Each mutex and its owner (the leader of that mutex), by name; null: no table under the prefix. */
  mutexes: MutexStatus[] | null;
  /**
   * The PostgreSQL timeline the table was last written on (the failover grace's marker row), or
   * null when the table has no marker (another database, or no instance has started on it).
   */
  timeline: number | null;
}

/**
 * Simba's status read-model: every mutex row of its table (owner, fencing token, state, time
 * left) and the failover grace's timeline, read with Simba's own statements. Read-only; a
 * missing table is `mutexes: null`, not an error. For the CLI, the dashboard and operators' tools.
 */
export async function readSimbaStatus(
  sql: SqlClient,
  options: SimbaTableOptions = {},
  /** The database clock (epoch ms) to read against: one clock for several read-models. Default: read now. */
  at?: { databaseNow: number },
): Promise<SimbaStatus> {
  const queries = new MutexQueryResolver(sql.dialect, options.tablePrefix ?? '');
  const databaseNow = at?.databaseNow ?? (await sql.nowMillis());
  const table = queries.table;
  if (!(await new SchemaManager(sql).tableExists(table))) {
    return { databaseNow, table, mutexes: null, timeline: null };
  }
  const rows = await sql.query(selectMutexStatus(table, sql.dialect));
  const [marker] = await sql.query<{ acquired_at: unknown }>(queries.select(TIMELINE_MARKER));
  return {
    databaseNow,
    table,
    mutexes: rows.map((row) => toMutexStatus(row, databaseNow)),
    timeline: marker ? toNumber(marker.acquired_at) : null,
  };
}

/** What a release found and did. */
export interface MutexReleaseOutcome {
  /** Who held the mutex before (null: nobody, or no such row). */
  heldBy: string | null;
  /**
   * released; would: `dryRun`, it would be released; not held: someone else (or nobody) holds it,
   * nothing changed; not found: no such mutex.
   */
  result: 'released' | 'would' | 'not held' | 'not found';
}

/**
 * Frees `mutex` if `owner` still holds it, with Simba's own release statement (no owner, acquirable
 * at once, the fencing token's base kept): for an owner the operator knows is dead. The check and
 * the change are one statement: an instance that took it over meanwhile keeps it. `dryRun` reads only.
 */
export async function releaseMutex(
  sql: SqlClient,
  options: SimbaTableOptions & { mutex: string; owner: string; dryRun?: boolean },
): Promise<MutexReleaseOutcome> {
  const queries = new MutexQueryResolver(sql.dialect, options.tablePrefix ?? '');
  const [row] = await sql.query<{ owner_id: unknown }>(queries.select(options.mutex));
  if (!row) return { heldBy: null, result: 'not found' };
  // CHAR(32) owner ids (Simba's DDL) come back padded on PostgreSQL.
  const heldBy =
    row.owner_id === null || row.owner_id === undefined ? null : String(row.owner_id).trimEnd() || null;
  if (heldBy !== options.owner) return { heldBy, result: 'not held' };
  if (options.dryRun) return { heldBy, result: 'would' };
  const changed = await sql.execute(queries.release(options.mutex, options.owner));
  return { heldBy, result: changed > 0 ? 'released' : 'not held' };
}

/** Simba's table under `tablePrefix` (for messages that name it). */
export function simbaTable(options: SimbaTableOptions = {}): string {
  return tableName(options.tablePrefix ?? '', SIMBA_MUTEX_TABLE.name);
}
