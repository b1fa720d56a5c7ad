import type { TableSpec } from '@holdfast/core/kit';

export const MUTEX_NAME_MAX_LENGTH = 66;
/**
 * Rows named so are a spread group's members (MutexSpread), not mutexes: `holdfast:member:<group
 * hash>:<contender hash>`, each owned by the instance it stands for. No mutex may be named so.
 */
export const MEMBER_ROW_PREFIX = 'holdfast:member:';
export const OWNER_ID_MAX_LENGTH = 128;
/** `owner_id` in Simba's own DDL is `CHAR(32)`: generated contender ids fit it. */
export const SEED_OWNER_ID_LENGTH = 32;

/**
 * `<prefix>simba_mutex`: one row per mutex (Simba's JDBC layout). Times are epoch ms from the
 * database clock; `owner_id` is '' when nobody owns the mutex; `version` grows on every acquire,
 * renewal and release (Simba's optimistic lock). Holdfast writes every column explicitly, so a
 * table made by Simba's own DDL (no defaults, `owner_id CHAR(32)`, unsigned types) works as well;
 * the defaults below only serve tables created by this spec.
 */
export const SIMBA_MUTEX_TABLE: TableSpec = {
  name: 'simba_mutex',
  columns: [
    { name: 'mutex', type: { kind: 'varchar', length: 66 } },
    { name: 'acquired_at', type: { kind: 'bigint' }, nullable: false, default: 0 },
    { name: 'ttl_at', type: { kind: 'bigint' }, nullable: false, default: 0 },
    { name: 'transition_at', type: { kind: 'bigint' }, nullable: false, default: 0 },
    // Nullable on purpose: Oracle stores '' as NULL. Holdfast always writes '' for "no owner".
    // Simba's DDL has CHAR(32): accepted, and contender ids are checked against the live length.
    {
      name: 'owner_id',
      type: { kind: 'varchar', length: 128 },
      accept: [{ kind: 'char', length: SEED_OWNER_ID_LENGTH }],
      minLength: SEED_OWNER_ID_LENGTH,
      default: "''",
    },
    { name: 'version', type: { kind: 'int' }, nullable: false, default: 0 },
  ],
  primaryKey: ['mutex'],
};
