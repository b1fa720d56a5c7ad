import type { TableSpec } from '@holdfast/core/kit';

/** `<prefix>FAILOVER_STORE`: the last good value of each (failover, key). */
export const FAILOVER_STORE_TABLE: TableSpec = {
  name: 'FAILOVER_STORE',
  columns: [
    { name: 'FAILOVER_NAME', type: { kind: 'varchar', length: 50 } },
    { name: 'FAILOVER_KEY', type: { kind: 'varchar', length: 256 } },
    { name: 'AS_OF', type: { kind: 'timestamp' }, nullable: false },
    { name: 'EXPIRE_ON', type: { kind: 'timestamp' }, nullable: false },
    // The Java library's DDL sizes PAYLOAD as a VARCHAR "based on your payload": accepted at
    // any length; a value longer than the column fails its store (logged and counted, never the call).
    { name: 'PAYLOAD', type: { kind: 'text' }, accept: [{ kind: 'varchar', length: 1 }] },
    { name: 'PAYLOAD_CLASS', type: { kind: 'varchar', length: 256 } },
  ],
  primaryKey: ['FAILOVER_NAME', 'FAILOVER_KEY'],
  indexes: [{ name: 'FAILOVER_STORE_EXPIRE_ON_IDX', columns: ['EXPIRE_ON'] }],
};

/** Longest failover name / domain the FAILOVER_NAME column holds. */
export const MAX_FAILOVER_NAME_LENGTH = 50;
