import type { TableSpec } from '@holdfast/core/kit';

/**
 * `<prefix>HOLDFAST_LOCK`: one row per lock name. `TIME` is the lease expiry in epoch ms from
 * the database clock (lease locker) or the last keep-alive (database locker); `BROKER_NAME`
 * names the holder. Same layout as ActiveMQ's ACTIVEMQ_LOCK, keyed by name instead of 1.
 */
export const HOLDFAST_LOCK_TABLE: TableSpec = {
  name: 'HOLDFAST_LOCK',
  columns: [
    { name: 'ID', type: { kind: 'varchar', length: 64 } },
    { name: 'TIME', type: { kind: 'bigint' }, nullable: true },
    { name: 'BROKER_NAME', type: { kind: 'varchar', length: 250 }, nullable: true },
  ],
  primaryKey: ['ID'],
};
