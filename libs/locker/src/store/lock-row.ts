import { SchemaManager, type SchemaMode, type SqlClient } from '@holdfast/core/kit';
import { LockerConfigurationError } from '../errors';
import { DEFAULT_LOCK_TABLE_NAMES, lockTableSpec, type LockTableNames } from './holdfast-lock.table';
import { failoverGraceApplies, TIMELINE_MARKER } from './lease-failover-grace';
import { LockQueryResolver } from './lock-query.resolver';

/** What the database lockers read of their options to prepare the lock row. */
export interface LockRowOptions {
  readonly tablePrefix: string;
  readonly schema: SchemaMode;
  readonly lockTable?: LockTableNames;
}

/**
 * Creates or checks the lock table (Holdfast's or the one `lockTableName`/`lockColumns` name),
 * makes sure the row of `lockName` exists, and returns the statements for it. On a table whose
 * ID is an integer (ActiveMQ's DDL) the lock name must be that row's number. With
 * `failoverGrace` (the lease locker), the lease statements keep the grace after a lossy
 * PostgreSQL failover where it applies (see lease-failover-grace.ts), and the table's timeline
 * marker row is made if missing.
 */
export async function prepareLockRow(
  sql: SqlClient,
  options: LockRowOptions,
  lockName: string,
  { failoverGrace = false }: { failoverGrace?: boolean } = {},
): Promise<LockQueryResolver> {
  const names = options.lockTable ?? DEFAULT_LOCK_TABLE_NAMES;
  const queries = new LockQueryResolver(sql.dialect, options.tablePrefix, names);
  const live = await new SchemaManager(sql).apply(lockTableSpec(names), options.tablePrefix, options.schema);
  const id = live.column(names.id);
  if ((id?.kind === 'bigint' || id?.kind === 'int') && !/^\d{1,18}$/.test(lockName)) {
    throw new LockerConfigurationError(
      `Option 'lockName' = ${JSON.stringify(lockName)}: ${queries.table}.${names.id} is an integer column ` +
        `(ActiveMQ's lock table), so the lock name must be the number of its row: use lockName: '1' for ` +
        `ActiveMQ's one row, or a table with a VARCHAR ID.`,
    );
  }
  if (lockName === TIMELINE_MARKER) {
    throw new LockerConfigurationError(
      `Option 'lockName' = ${JSON.stringify(lockName)}: the name is reserved: its row of ${queries.table} ` +
        `keeps the PostgreSQL timeline for the lease locker's grace after a failover.`,
    );
  }
  if (failoverGrace && failoverGraceApplies(sql.dialect, names, id?.kind)) {
    queries.failoverGrace = true;
    const marker = queries.ensureTimelineMarker();
    if (marker) await sql.execute(marker);
  }
  const exists = queries.rowExists(lockName);
  if ((await sql.query(exists)).length === 0) {
    const ensure = queries.ensureRow(lockName);
    await sql.execute(ensure);
  }
  return queries;
}
