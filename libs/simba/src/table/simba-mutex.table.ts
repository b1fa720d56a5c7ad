import type { TableSpec } from '@holdfast/core';

/**
 * `<prefix>simba_mutex`: one row per mutex (Simba's JDBC layout). Times are epoch ms from the
 * database clock; `owner_id` is '' when nobody owns the mutex; `version` grows on every acquire,
 * renewal and release and is handed out as the fencing token. The defaults let a row be created
 * with its key alone (`INSERT ... DO NOTHING`), so concurrent first users never overwrite each other.
 */
export const SIMBA_MUTEX_TABLE: TableSpec = {
  name: 'simba_mutex',
  columns: [
    { name: 'mutex', type: { kind: 'varchar', length: 66 } },
    { name: 'acquired_at', type: { kind: 'bigint' }, nullable: false, default: 0 },
    { name: 'ttl_at', type: { kind: 'bigint' }, nullable: false, default: 0 },
    { name: 'transition_at', type: { kind: 'bigint' }, nullable: false, default: 0 },
    // Nullable on purpose: Oracle stores '' as NULL. Holdfast always writes '' for "no owner".
    { name: 'owner_id', type: { kind: 'varchar', length: 128 }, default: "''" },
    { name: 'version', type: { kind: 'int' }, nullable: false, default: 0 },
  ],
  primaryKey: ['mutex'],
};

export const MUTEX_NAME_MAX_LENGTH = 66;
export const OWNER_ID_MAX_LENGTH = 128;
