import type { TableSpec } from '@holdfast/core/kit';

/**
 * `<prefix>HOLDFAST_LOCK`: one row per lock name. `TIME` is the lease expiry in epoch ms from
 * the database clock (lease locker) or the last keep-alive (database locker); `BROKER_NAME`
 * names the holder. Same layout as ActiveMQ's ACTIVEMQ_LOCK, keyed by name instead of 1.
 */
export const HOLDFAST_LOCK_TABLE: TableSpec = {
  name: 'HOLDFAST_LOCK',
  columns: [
    // An integer ID is ActiveMQ's DDL (one row, ID = 1): its row is named by a numeric lockName.
    { name: 'ID', type: { kind: 'varchar', length: 64 }, accept: [{ kind: 'bigint' }, { kind: 'int' }] },
    { name: 'TIME', type: { kind: 'bigint' }, nullable: true },
    { name: 'BROKER_NAME', type: { kind: 'varchar', length: 250 }, nullable: true },
  ],
  primaryKey: ['ID'],
};

/**
 * The names of the lock table and its three columns (`lockTableName`, `lockColumns`): Holdfast's
 * own by default, or those of an existing table such as ActiveMQ's `ACTIVEMQ_LOCK`. Every name is
 * a validated identifier (see `LOCK_IDENTIFIER`): they are the only text placed in the SQL.
 */
export interface LockTableNames {
  /** Without the table prefix. */
  readonly table: string;
  readonly id: string;
  readonly time: string;
  readonly brokerName: string;
}

export const DEFAULT_LOCK_TABLE_NAMES: LockTableNames = {
  table: HOLDFAST_LOCK_TABLE.name,
  id: 'ID',
  time: 'TIME',
  brokerName: 'BROKER_NAME',
};

/** A plain SQL identifier: what may be placed unquoted in a statement on every supported database. */
export const LOCK_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** The lock table under the configured names (Holdfast's types; `ID` may also be an integer). */
export function lockTableSpec(names: LockTableNames = DEFAULT_LOCK_TABLE_NAMES): TableSpec {
  const rename: Record<string, string> = { ID: names.id, TIME: names.time, BROKER_NAME: names.brokerName };
  return {
    ...HOLDFAST_LOCK_TABLE,
    name: names.table,
    columns: HOLDFAST_LOCK_TABLE.columns.map((c) => ({ ...c, name: rename[c.name] })),
    primaryKey: [names.id],
  };
}
