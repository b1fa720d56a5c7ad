import type { TableSpec } from '@holdfast/core/kit';

/** Longest key a rate limit may name (a message type name, as PAYLOAD_TYPE_NAME holds it). */
export const MAX_RATE_KEY_LENGTH = 512;

/**
 * `<prefix>HOLDFAST_INBOX_RATE`: the permits of the inbox option `rateLimits`, counted across the
 * cluster. One row per key and window: `RATE_KEY` the message type name, `WINDOW_START` the start
 * of a window of the key's interval (epoch ms on the database clock, a multiple of the interval),
 * `PERMITS` the deliveries granted in it so far (never above the key's limit). A node takes
 * permits after each claim that holds messages of a limited type (InboxRateStatements.take);
 * windows older than RATE_WINDOWS_KEPT intervals are deleted as a key opens a new one.
 */
export const INBOX_RATE_TABLE: TableSpec = {
  name: 'HOLDFAST_INBOX_RATE',
  columns: [
    { name: 'RATE_KEY', type: { kind: 'varchar', length: MAX_RATE_KEY_LENGTH } },
    { name: 'WINDOW_START', type: { kind: 'bigint' } },
    { name: 'PERMITS', type: { kind: 'int' }, nullable: false, default: 0 },
  ],
  primaryKey: ['RATE_KEY', 'WINDOW_START'],
};

/** Windows of a key kept in the table (the current one and the 9 before it), for an admin to read. */
export const RATE_WINDOWS_KEPT = 10;
