import { v7 as uuidv7 } from 'uuid';
import { InvalidMessageError } from '../errors';
import type { AcceptMessage } from '../inbox-message';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import type { NewMessageRow } from '../store/cor-message.rows';
import {
  MAX_ID_LENGTH,
  MAX_TYPE_NAME_LENGTH,
  MAX_TYPE_NAMESPACE_LENGTH,
  MAX_TYPE_REVISION_LENGTH,
} from '../store/cor-message.table';
import { MAX_GROUP_KEY_LENGTH } from '../store/inbox-group.table';
import { FAR_FUTURE } from '../store/next-retry';
import {
  checkedExpiry,
  checkedOnExisting,
  checkedPriority,
  checkedSchedule,
  checkedText,
  type Refuse,
} from './accept-validation';
import {
  apiEncoding,
  decodePayload,
  encodePayload,
  PAYLOAD_ENCODINGS,
  storedEncoding,
} from './message-codec';
import { defaultTtlToIso, type ParsedTtl } from './ttl';

/**
 * A message as given to accept or acceptAll, validated (InvalidMessageError naming the field and
 * the message's index) and encoded into the row the inbox writes.
 */
export class MessageRowBuilder {
  private readonly defaultTtl?: ParsedTtl;

  constructor(
    private readonly options: Pick<ResolvedInboxOptions, 'defaultTtl' | 'groupBy' | 'priorities'>,
    /** The latest time NEXT_RETRY holds (the live table's time columns decide). */
    private readonly timeLimit: () => number,
  ) {
    if (options.defaultTtl !== undefined) this.defaultTtl = defaultTtlToIso(options.defaultTtl);
  }

  /** The row of `message` (`index`: its place in an acceptAll). */
  toRow(message: AcceptMessage, index?: number): NewMessageRow {
    const bad: Refuse = (field, value, reason) => new InvalidMessageError(field, value, reason, index);
    if (message === null || typeof message !== 'object') throw bad('message', message, 'must be an object');
    const { id = uuidv7(), type, payload, encoding = 'json', ttl, expiration, deliverAt, delay } = message;
    const { priority, onExisting } = message;
    if (typeof id !== 'string' || id.trim() === '') throw bad('id', id, 'must be a non-empty string');
    if (id.length > MAX_ID_LENGTH)
      throw bad('id', id, `is ${id.length} characters long; at most ${MAX_ID_LENGTH} fit`);
    if (type === null || typeof type !== 'object')
      throw bad('type', type, 'must be an object { namespace?, name, revision? }');
    const name = checkedText(bad, 'type.name', type.name, MAX_TYPE_NAME_LENGTH, true) as string;
    const namespace = checkedText(bad, 'type.namespace', type.namespace, MAX_TYPE_NAMESPACE_LENGTH, false);
    const revision = checkedText(bad, 'type.revision', type.revision, MAX_TYPE_REVISION_LENGTH, false);
    if (!PAYLOAD_ENCODINGS.includes(encoding))
      throw bad('encoding', encoding, `must be one of ${PAYLOAD_ENCODINGS.join(', ')}`);
    const { ttl: parsedTtl, expirationMs } = checkedExpiry(bad, ttl, expiration, this.defaultTtl);
    // The last time NEXT_RETRY holds below the pause marker (a MySQL/MariaDB TIMESTAMP ends in 2038).
    const latest = Math.min(FAR_FUTURE - 1, this.timeLimit());
    const schedule = checkedSchedule(bad, deliverAt, delay, latest);
    if (schedule.notBefore !== undefined && expirationMs !== null && schedule.notBefore >= expirationMs)
      throw bad(
        'deliverAt',
        deliverAt,
        `is not before the message's expiration (${new Date(expirationMs).toISOString()})`,
      );
    if (schedule.delayMs !== undefined && parsedTtl && schedule.delayMs >= parsedTtl.ms)
      throw bad('delay', delay, `is not shorter than the message's ttl (${parsedTtl.iso})`);

    const row: NewMessageRow = {
      id,
      encoding: storedEncoding(encoding),
      namespace,
      name,
      revision,
      payload: encodePayload(payload, encoding, index),
      ttl: parsedTtl?.iso ?? null,
      ttlMs: parsedTtl?.ms ?? null,
      expiration: expirationMs,
    };
    if (schedule.notBefore !== undefined) row.notBefore = schedule.notBefore;
    if (schedule.delayMs !== undefined) row.delayMs = schedule.delayMs;
    if (this.options.groupBy) row.group = this.groupOf(row, bad);
    if (priority !== undefined && priority !== null)
      row.priority = checkedPriority(bad, priority, !!this.options.priorities);
    const existing = checkedOnExisting(bad, onExisting);
    if (existing) row.onExisting = existing;
    return row;
  }

  /**
   * The message's group, from `groupBy` over the message as its handler will see it (the payload
   * decoded from what is stored; `inserted` is the local time, the database's is not known yet).
   */
  private groupOf(row: NewMessageRow, bad: Refuse): string {
    let key: unknown;
    try {
      key = this.options.groupBy!({
        id: row.id,
        type: {
          ...(row.namespace !== null ? { namespace: row.namespace } : {}),
          name: row.name,
          ...(row.revision !== null ? { revision: row.revision } : {}),
        },
        encoding: apiEncoding(row.encoding)!,
        payload: decodePayload(row.id, row.encoding, row.payload),
        inserted: new Date(),
        ...(row.ttl !== null ? { ttl: row.ttl } : {}),
        ...(row.expiration !== null ? { expiration: new Date(row.expiration) } : {}),
        retries: 0,
      });
    } catch (error) {
      throw bad('groupBy', row.id, `groupBy threw: ${(error as Error)?.message ?? String(error)}`);
    }
    const group = String(key);
    if (group.length > MAX_GROUP_KEY_LENGTH)
      throw bad('groupBy', group, `is ${group.length} characters long; at most ${MAX_GROUP_KEY_LENGTH} fit`);
    return group;
  }
}
