import type { StatementBinder } from '@holdfast/core/kit';
import type { NewMessageRow, Now } from './cor-message.rows';
import type { CorMessageShared } from './cor-message.shared';

/**
 * What a message row's columns take when it is written anew, by an insert (CorMessageAccept) or
 * by a replace (CorMessageReplace): SQL expressions, each value bound as it is built, in this
 * order (MySQL and SQLite number '?' by position). Absent values are NULL literals: fewer
 * parameters make large inserts noticeably cheaper to parse.
 */
export interface MessageRowValues {
  encoding: string;
  /** The seed's PAYLOAD_TYPE_NAMESPACE is NOT NULL: a type without one is stored as ''. */
  namespace: string;
  name: string;
  revision: string;
  payload: string;
  /** INSERTED: now (the database clock, or the bound test clock). */
  inserted: string;
  ttl: string;
  /** An absolute expiration, or INSERTED + the TTL, or NULL. */
  expiration: string;
}

/** The row's content columns (see MessageRowValues), bound in the order of its fields. */
export function messageRowValues(
  on: CorMessageShared,
  b: StatementBinder,
  row: NewMessageRow,
  now: Now,
): MessageRowValues {
  const opt = (v: string | null) => (v === null ? 'NULL' : b.bind(v));
  return {
    encoding: b.bind(row.encoding),
    namespace: b.bind(row.namespace ?? ''),
    name: b.bind(row.name),
    revision: opt(row.revision),
    payload: b.bind(row.payload),
    inserted: on.now(b, now),
    ttl: opt(row.ttl),
    expiration:
      row.expiration !== null
        ? on.t.at(b, row.expiration)
        : row.ttlMs !== null
          ? on.nowPlus(b, now, row.ttlMs)
          : 'NULL',
  };
}

/** The seed's "not before" in NEXT_RETRY: deliverAt, or INSERTED + delay; NULL (due now) otherwise. */
export function notBeforeValue(
  on: CorMessageShared,
  b: StatementBinder,
  row: NewMessageRow,
  now: Now,
): string {
  return row.notBefore !== undefined
    ? on.t.at(b, row.notBefore)
    : row.delayMs !== undefined
      ? on.nowPlus(b, now, row.delayMs)
      : 'NULL';
}

/** PRIORITY (priorities on): a literal, an integer validated at accept. */
export function priorityValue(row: NewMessageRow): string {
  return `${Math.trunc(row.priority ?? 0)}`;
}
