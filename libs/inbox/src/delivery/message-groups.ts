import type { Logger } from '@nestjs/common';
import { apiEncoding, decodePayload } from '../acceptor/message-codec';
import type { InboxMessage, MessageType, PayloadEncoding } from '../inbox-message';
import type { MessageRow } from '../store/cor-message.rows';

/** A claimed row, decoded: its message, or why it could not be decoded. */
export interface Item {
  row: MessageRow;
  message?: InboxMessage;
  decodeError?: unknown;
}

/**
 * The batch's rows as groups in delivery order: a group stored at accept (strict order: the
 * claim took a run from the group's head); rows without one (a Java client's, or accepted
 * before groupBy) are grouped in the batch by `groupBy`; without `groupBy`, each row alone.
 */
export function groupsOf(
  rows: readonly MessageRow[],
  groupBy: ((message: InboxMessage) => unknown) | undefined,
  logger: Logger,
): Item[][] {
  if (!groupBy && rows.every((row) => row.group === undefined)) return rows.map((row) => [toItem(row)]);
  const groups = new Map<string, Item[]>();
  for (const row of rows) {
    const item = toItem(row);
    let key = row.group !== undefined ? `g:${row.group}` : `m:${row.id}`;
    if (row.group === undefined && item.message && groupBy) {
      try {
        key = `g:${String(groupBy(item.message))}`;
      } catch (error) {
        logger.warn(
          `groupBy threw for message '${row.id}' (${(error as Error).message}); delivering it alone`,
        );
      }
    }
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return [...groups.values()];
}

/** The row decoded into the message a handler gets (or the decoding's error). */
export function toItem(row: MessageRow): Item {
  try {
    // Optional keys are left out, not set to undefined (built without spreads: once per message).
    const { namespace, name, revision } = row;
    const type: MessageType =
      namespace !== null
        ? revision !== null
          ? { namespace, name, revision }
          : { namespace, name }
        : revision !== null
          ? { name, revision }
          : { name };
    const message: InboxMessage = {
      id: row.id,
      type,
      encoding: apiEncoding(row.encoding) ?? (row.encoding as PayloadEncoding),
      payload: decodePayload(row.id, row.encoding, row.payload),
      inserted: new Date(row.inserted),
      retries: row.retries,
    };
    if (row.ttl !== null) message.ttl = row.ttl;
    if (row.expiration !== null) message.expiration = new Date(row.expiration);
    if (row.priority !== undefined) message.priority = row.priority;
    return { row, message };
  } catch (decodeError) {
    return { row, decodeError };
  }
}
