import type { TableSpec } from '@holdfast/core/kit';
import {
  MAX_ID_LENGTH,
  MAX_TYPE_NAME_LENGTH,
  MAX_TYPE_NAMESPACE_LENGTH,
  MAX_TYPE_REVISION_LENGTH,
} from '../store/cor-message.table';

/** Longest error text kept per attempt in the history (COR_MESSAGE's own ERROR is never cut). */
export const MAX_HISTORY_ERROR_LENGTH = 8000;

/**
 * `<prefix>HOLDFAST_INBOX_HISTORY` (opt-in, `history` option): one row per outcome of a message
 * (delivered, failed, parked, expired) with the attempt's number, its error, the node and the time
 * (`AT_MS`, epoch ms, database clock). COR_MESSAGE is not touched: a delivered message is still
 * deleted there, and only its last error stays on its row. Written in batches off the delivery's
 * path, pruned by age and by count at the cleanup tick.
 */
export const INBOX_HISTORY_TABLE: TableSpec = {
  name: 'HOLDFAST_INBOX_HISTORY',
  columns: [
    { name: 'ENTRY_ID', type: { kind: 'varchar', length: 40 } },
    { name: 'MESSAGE_ID', type: { kind: 'varchar', length: MAX_ID_LENGTH }, nullable: false },
    { name: 'TYPE_NAMESPACE', type: { kind: 'varchar', length: MAX_TYPE_NAMESPACE_LENGTH } },
    { name: 'TYPE_NAME', type: { kind: 'varchar', length: MAX_TYPE_NAME_LENGTH } },
    { name: 'TYPE_REVISION', type: { kind: 'varchar', length: MAX_TYPE_REVISION_LENGTH } },
    { name: 'OUTCOME', type: { kind: 'varchar', length: 16 }, nullable: false },
    { name: 'ATTEMPT', type: { kind: 'int' }, nullable: false },
    { name: 'ERROR', type: { kind: 'text' } },
    { name: 'NODE', type: { kind: 'varchar', length: 32 }, nullable: false },
    { name: 'AT_MS', type: { kind: 'bigint' }, nullable: false },
  ],
  // ENTRY_ID grows per node (a random prefix, then a counter): inserts append to the key's index
  // instead of landing at random places in it. Two indexes only: every one is written per row (a
  // type's recent attempts walk AT_MS backwards).
  primaryKey: ['ENTRY_ID'],
  indexes: [
    { name: 'HOLDFAST_INBOX_HIST_MSG_IDX', columns: ['MESSAGE_ID', 'AT_MS'] },
    { name: 'HOLDFAST_INBOX_HIST_AT_IDX', columns: ['AT_MS'] },
  ],
};

/**
 * `<prefix>HOLDFAST_INBOX_STATS` (opt-in, `stats` option): per node and minute (`MINUTE_MS`, the
 * minute's start in epoch ms, database clock) the messages it delivered, saw fail and parked,
 * written once a minute from counters in memory; and at each cleanup tick one sample by the node
 * that cleans (the leader in leader mode) of the inbox's depth, its parked messages and the
 * leader (`DEPTH`, `PARKED_NOW`, `LEADER`). What the dashboard's charts of the last hour read.
 */
export const INBOX_STATS_TABLE: TableSpec = {
  name: 'HOLDFAST_INBOX_STATS',
  columns: [
    { name: 'ENTRY_ID', type: { kind: 'varchar', length: 40 } },
    { name: 'NODE', type: { kind: 'varchar', length: 32 }, nullable: false },
    { name: 'MINUTE_MS', type: { kind: 'bigint' }, nullable: false },
    { name: 'DELIVERED', type: { kind: 'int' }, nullable: false, default: 0 },
    { name: 'FAILED', type: { kind: 'int' }, nullable: false, default: 0 },
    { name: 'PARKED', type: { kind: 'int' }, nullable: false, default: 0 },
    { name: 'DEPTH', type: { kind: 'int' } },
    { name: 'PARKED_NOW', type: { kind: 'int' } },
    { name: 'LEADER', type: { kind: 'varchar', length: 32 } },
  ],
  primaryKey: ['ENTRY_ID'],
  indexes: [{ name: 'HOLDFAST_INBOX_STATS_MIN_IDX', columns: ['MINUTE_MS'] }],
};
