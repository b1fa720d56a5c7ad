import type { TableSpec } from '@holdfast/core/kit';

/** Longest type label a pause may name (`namespace:name@revision`). */
export const MAX_PAUSE_TYPE_LENGTH = 512;
/** Longest actor a pause records. */
export const MAX_PAUSE_ACTOR_LENGTH = 255;
/** Longest reason a pause records. */
export const MAX_PAUSE_REASON_LENGTH = 1000;

/**
 * `<prefix>HOLDFAST_INBOX_PAUSE`: the message types paused across the cluster, kept out of
 * COR_MESSAGE (the seed's table, shared with Java clients). One row per paused type: `TYPE_KEY`
 * is its label as `parseMessageTypeLabel` reads it (`shop:order` any revision, `shop:order@2`
 * that revision, `order` that name in any namespace, `:order` without one), `PAUSED_BY` who
 * paused it, `PAUSED_AT` when (epoch ms on the database clock), `REASON` why, if given. A resume
 * deletes the row. Every delivering node reads the table at most once per poll interval.
 */
export const INBOX_PAUSE_TABLE: TableSpec = {
  name: 'HOLDFAST_INBOX_PAUSE',
  columns: [
    { name: 'TYPE_KEY', type: { kind: 'varchar', length: MAX_PAUSE_TYPE_LENGTH } },
    { name: 'PAUSED_BY', type: { kind: 'varchar', length: MAX_PAUSE_ACTOR_LENGTH }, nullable: false },
    { name: 'PAUSED_AT', type: { kind: 'bigint' }, nullable: false },
    { name: 'REASON', type: { kind: 'varchar', length: MAX_PAUSE_REASON_LENGTH }, nullable: true },
  ],
  primaryKey: ['TYPE_KEY'],
};
