import type { IndexSpec, TableSpec } from '@holdfast/core/kit';
import { MAX_ID_LENGTH } from './cor-message.table';

/** Longest group key `groupBy` may return; a longer one is refused at accept. */
export const MAX_GROUP_KEY_LENGTH = 255;

/**
 * The claim's way through one group: earlier messages of the group first (the message's own
 * INSERTED and ID, copied at accept, so the group is read in delivery order without touching
 * COR_MESSAGE's rows that are not earlier).
 */
export const INBOX_GROUP_ORDER_INDEX: IndexSpec = {
  name: 'HOLDFAST_INBOX_GROUP_IDX',
  columns: ['GROUP_KEY', 'INSERTED', 'ID'],
};

/**
 * `<prefix>HOLDFAST_INBOX_GROUP`: the group of each message accepted while `groupBy` is set,
 * kept beside COR_MESSAGE (whose seed layout has no group column and is shared with Java
 * clients). One row per message, written in the accept's transaction and deleted with the
 * message; `INSERTED` is the message's own. A message without a row here (written by a Java
 * client, or accepted before `groupBy` was set) belongs to no group.
 */
export const INBOX_GROUP_TABLE: TableSpec = {
  name: 'HOLDFAST_INBOX_GROUP',
  columns: [
    { name: 'ID', type: { kind: 'varchar', length: MAX_ID_LENGTH } },
    { name: 'GROUP_KEY', type: { kind: 'varchar', length: MAX_GROUP_KEY_LENGTH }, nullable: false },
    { name: 'INSERTED', type: { kind: 'timestamp' }, nullable: false },
  ],
  primaryKey: ['ID'],
  indexes: [INBOX_GROUP_ORDER_INDEX],
};
