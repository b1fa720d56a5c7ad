import type { TableSpec } from '@holdfast/core';

/** Longest message id (the reference's column width); longer ids are refused, never truncated. */
export const MAX_ID_LENGTH = 64;
export const MAX_TYPE_NAMESPACE_LENGTH = 128;
export const MAX_TYPE_NAME_LENGTH = 128;
export const MAX_TYPE_REVISION_LENGTH = 64;
export const MAX_TTL_LENGTH = 64;
/** The stored error (message + stack) is cut to this many characters. */
export const MAX_ERROR_LENGTH = 4000;

/**
 * `<prefix>COR_MESSAGE`: exactly the columns of camunda-bpm-correlate's message table. Times
 * (INSERTED, EXPIRATION, NEXT_RETRY) are BIGINT epoch milliseconds of the database clock, so
 * every due/expiry comparison is a plain integer comparison against `dialect.nowMillis` on all
 * dialects. Pause, park and the delivery lease live in NEXT_RETRY (see `next-retry.ts`).
 */
export const COR_MESSAGE_TABLE: TableSpec = {
  name: 'COR_MESSAGE',
  columns: [
    { name: 'ID', type: { kind: 'varchar', length: MAX_ID_LENGTH } },
    { name: 'PAYLOAD_ENCODING', type: { kind: 'varchar', length: 64 }, nullable: false },
    { name: 'PAYLOAD_TYPE_NAMESPACE', type: { kind: 'varchar', length: MAX_TYPE_NAMESPACE_LENGTH } },
    { name: 'PAYLOAD_TYPE_NAME', type: { kind: 'varchar', length: MAX_TYPE_NAME_LENGTH }, nullable: false },
    { name: 'PAYLOAD_TYPE_REVISION', type: { kind: 'varchar', length: MAX_TYPE_REVISION_LENGTH } },
    { name: 'PAYLOAD', type: { kind: 'blob' } },
    { name: 'INSERTED', type: { kind: 'bigint' }, nullable: false },
    { name: 'TTL_DURATION', type: { kind: 'varchar', length: MAX_TTL_LENGTH } },
    { name: 'EXPIRATION', type: { kind: 'bigint' } },
    { name: 'RETRIES', type: { kind: 'int' }, nullable: false, default: 0 },
    { name: 'NEXT_RETRY', type: { kind: 'bigint' } },
    { name: 'ERROR', type: { kind: 'varchar', length: MAX_ERROR_LENGTH } },
  ],
  primaryKey: ['ID'],
  indexes: [
    // The due query orders by INSERTED and filters on NEXT_RETRY: walking this index in order
    // finds the oldest due rows without sorting the table.
    { name: 'COR_MESSAGE_DUE_IDX', columns: ['INSERTED', 'NEXT_RETRY'] },
    // Cleanup of expired rows in bounded chunks.
    { name: 'COR_MESSAGE_EXP_IDX', columns: ['EXPIRATION'] },
  ],
};
