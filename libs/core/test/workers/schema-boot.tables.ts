import type { TableSpec } from '@holdfast/core/kit';

/** Two tables with indexes, booted at once like the modules of one app. */
export const BOOT_TABLES: readonly TableSpec[] = [
  {
    name: 'BOOT_MSG',
    columns: [
      { name: 'ID', type: { kind: 'varchar', length: 64 } },
      { name: 'INSERTED', type: { kind: 'bigint' }, nullable: false },
      { name: 'NEXT_RETRY', type: { kind: 'bigint' } },
      { name: 'EXPIRATION', type: { kind: 'bigint' } },
    ],
    primaryKey: ['ID'],
    indexes: [
      { name: 'BOOT_MSG_DUE_IDX', columns: ['INSERTED', 'NEXT_RETRY'] },
      { name: 'BOOT_MSG_EXP_IDX', columns: ['EXPIRATION'] },
    ],
  },
  {
    name: 'BOOT_MUTEX',
    columns: [
      { name: 'mutex', type: { kind: 'varchar', length: 66 } },
      { name: 'owner_id', type: { kind: 'varchar', length: 128 }, default: "''" },
      { name: 'version', type: { kind: 'int' }, nullable: false, default: 0 },
    ],
    primaryKey: ['mutex'],
    indexes: [{ name: 'BOOT_MUTEX_OWNER_IDX', columns: ['owner_id'] }],
  },
];
