import {
  InvalidOptionsError,
  SchemaManager,
  StatementBinder,
  tableName,
  type SqlClient,
  type Statement,
} from '@holdfast/core/kit';
import {
  DEFAULT_LOCK_TABLE_NAMES,
  LOCK_IDENTIFIER,
  lockTableSpec,
  type LockTableNames,
} from '../store/holdfast-lock.table';
import { failoverGraceApplies, TIMELINE_MARKER } from '../store/lease-failover-grace';
import { LockQueryResolver } from '../store/lock-query.resolver';
import { toLockStatus, type LockStatus } from '../store/lock-status';

export type { LockStatus };

/**
 * Where the lock rows are: the same options as LockerModule's (`tablePrefix`, `lockTableName`,
 * `lockColumns`); ScheduledLockModule's table is Holdfast's own under its `tablePrefix`.
 */
export interface LockTableOptions {
  tablePrefix?: string;
  lockTableName?: string;
  lockColumns?: { id?: string; time?: string; brokerName?: string };
}

/** What the lock table says right now, on the database clock. */
export interface LockerStatus {
  databaseNow: number;
  /** The table read, prefix included. */
  table: string;
  /** Every lock row (the failover grace's marker left out), by name; null: no such table. */
  locks: LockStatus[] | null;
}

/** The table and column names `options` name, each a plain identifier (InvalidOptionsError otherwise). */
function lockTableNames(options: LockTableOptions): LockTableNames {
  const names: LockTableNames = {
    table: options.lockTableName ?? DEFAULT_LOCK_TABLE_NAMES.table,
    id: options.lockColumns?.id ?? DEFAULT_LOCK_TABLE_NAMES.id,
    time: options.lockColumns?.time ?? DEFAULT_LOCK_TABLE_NAMES.time,
    brokerName: options.lockColumns?.brokerName ?? DEFAULT_LOCK_TABLE_NAMES.brokerName,
  };
  const option = {
    table: 'lockTableName',
    id: 'lockColumns.id',
    time: 'lockColumns.time',
    brokerName: 'lockColumns.brokerName',
  };
  const problems = (Object.keys(names) as (keyof LockTableNames)[])
    .filter((key) => typeof names[key] !== 'string' || !LOCK_IDENTIFIER.test(names[key]))
    .map(
      (key) =>
        `${option[key]} '${String(names[key])}' must be a plain SQL identifier (a letter or _, then letters, digits or _; at most 63 characters)`,
    );
  if (problems.length) throw new InvalidOptionsError('lock table', problems);
  return names;
}

/** Every lock row of the table, the marker of the failover grace left out (by its holder). */
function selectLocks(sql: SqlClient, table: string, names: LockTableNames): Statement {
  const b = new StatementBinder(sql.dialect);
  return b.statement(
    `SELECT ${names.id} AS lock_id, ${names.brokerName} AS broker_name, ${names.time} AS lock_time FROM ${table} ` +
      `WHERE ${names.brokerName} IS NULL OR ${names.brokerName} <> ${b.bind(TIMELINE_MARKER)} ORDER BY ${names.id}`,
  );
}

/**
 * The locker's status read-model: every row of its lock table (Holdfast's `HOLDFAST_LOCK`, or
 * the table `lockTableName`/`lockColumns` name) with its master and lease against the database
 * clock. Read-only; a missing table is `locks: null`. For the CLI, the dashboard and operators' tools.
 */
export async function readLockerStatus(
  sql: SqlClient,
  options: LockTableOptions = {},
  /** The database clock (epoch ms) to read against: one clock for several read-models. Default: read now. */
  at?: { databaseNow: number },
): Promise<LockerStatus> {
  const names = lockTableNames(options);
  const table = new LockQueryResolver(sql.dialect, options.tablePrefix ?? '', names).table;
  const databaseNow = at?.databaseNow ?? (await sql.nowMillis());
  if (!(await new SchemaManager(sql).tableExists(table))) return { databaseNow, table, locks: null };
  const rows = await sql.query(selectLocks(sql, table, names));
  return { databaseNow, table, locks: rows.map((row) => toLockStatus(row, databaseNow)) };
}

/** What a release found and did. */
export interface LockReleaseOutcome {
  /** The table, prefix included. */
  table: string;
  /** Who held the lock before (null: nobody, or no such row). */
  heldBy: string | null;
  /**
   * released; would: `dryRun`, it would be released; not held: someone else (or nobody) holds it,
   * or a failover grace began meanwhile, nothing changed; not found: no such lock row.
   */
  result: 'released' | 'would' | 'not held' | 'not found';
}

/**
 * Frees lock `lock` if `owner` still holds it, with the locker's own release statement (no holder,
 * no time: a standby takes it at its next try), for an owner the operator knows is dead. The check
 * and the change are one statement. On Holdfast's own table on PostgreSQL the statement carries the
 * locker's failover grace guard, as the lease locker's own release does: after a promotion it
 * starts the grace and releases nothing. `dryRun` reads only.
 */
export async function releaseLock(
  sql: SqlClient,
  options: LockTableOptions & { lock: string; owner: string; dryRun?: boolean },
): Promise<LockReleaseOutcome> {
  const names = lockTableNames(options);
  const queries = new LockQueryResolver(sql.dialect, options.tablePrefix ?? '', names);
  const table = queries.table;
  const [row] = await sql.query<{ broker_name: unknown }>(queries.readRow(options.lock));
  if (!row) return { table, heldBy: null, result: 'not found' };
  const heldBy =
    row.broker_name === null || row.broker_name === undefined
      ? null
      : String(row.broker_name).trimEnd() || null;
  if (heldBy !== options.owner) return { table, heldBy, result: 'not held' };
  if (options.dryRun) return { table, heldBy, result: 'would' };
  const live = await new SchemaManager(sql).describe(lockTableSpec(names), table);
  queries.failoverGrace = failoverGraceApplies(sql.dialect, names, live.column(names.id)?.kind);
  const changed = await sql.execute(queries.releaseLease(options.lock, options.owner));
  return { table, heldBy, result: changed > 0 ? 'released' : 'not held' };
}

/** The lock table `options` name, prefix included (for messages that name it). */
export function lockTable(options: LockTableOptions = {}): string {
  return tableName(options.tablePrefix ?? '', lockTableNames(options).table);
}
