import type { TableSpec } from '@holdfast/core/kit';

/**
 * `<prefix>HOLDFAST_INBOX_LEASE`: the inbox's own coordination rows, kept out of COR_MESSAGE so
 * a camunda-correlate reader of that table never sees a non-message row. One row per lease:
 * `TICK` is the last cleanup tick claimed (the database clock in ms divided by the cleanup
 * interval), `HOLDER` names the node that claimed it. Used in competing mode only.
 */
export const INBOX_LEASE_TABLE: TableSpec = {
  name: 'HOLDFAST_INBOX_LEASE',
  columns: [
    { name: 'LEASE_NAME', type: { kind: 'varchar', length: 128 } },
    { name: 'TICK', type: { kind: 'bigint' }, nullable: false },
    { name: 'HOLDER', type: { kind: 'varchar', length: 128 } },
  ],
  primaryKey: ['LEASE_NAME'],
};
