import { createHash } from 'node:crypto';

/** PostgreSQL's longest identifier (NAMEDATALEN - 1 bytes); pg_notify refuses a longer channel. */
const MAX_CHANNEL_BYTES = 63;

/**
 * The LISTEN/NOTIFY channel of an inbox table: `hf_inbox_<table>`, or, when that would be longer
 * than an identifier may be, `hf_inbox_` and a hash of the table name. Table names are made of
 * [A-Za-z0-9_.] (the prefix is validated), so the channel is safe inside double quotes.
 */
export function inboxNotifyChannel(table: string): string {
  const plain = `hf_inbox_${table}`;
  if (Buffer.byteLength(plain) <= MAX_CHANNEL_BYTES) return plain;
  return `hf_inbox_${createHash('sha256').update(table).digest('hex').slice(0, 40)}`;
}
