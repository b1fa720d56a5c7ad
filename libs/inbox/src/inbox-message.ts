/** The type of a message: what a handler subscribes to. */
export interface MessageType {
  namespace?: string;
  name: string;
  revision?: string;
}

export type PayloadEncoding = 'json' | 'binary';

/** What `MessageAcceptor.accept` takes. */
export interface AcceptMessage<T = unknown> {
  /** Caller's id (≤ 64 characters); a time-ordered UUID (v7) when omitted. */
  id?: string;
  type: MessageType;
  /** A JSON-serializable value ('json', the default) or a Buffer ('binary'). */
  payload: T;
  encoding?: PayloadEncoding;
  /** Time to live as an ISO-8601 duration ('PT10M'); EXPIRATION = INSERTED + TTL. */
  ttl?: string;
  /** An absolute expiration instead of a TTL. */
  expiration?: Date;
  /**
   * Not delivered before this time (stored in NEXT_RETRY, the seed's "not before"); a time past
   * is due at once. Not with `delay`.
   */
  deliverAt?: Date;
  /**
   * Not delivered before INSERTED + this duration (the database clock): milliseconds, '30s', '5m'
   * or ISO-8601 'PT5M'. Not with `deliverAt`.
   */
  delay?: number | string;
  /**
   * With the inbox option `priorities`: an integer from -32768 to 32767, lower delivered first
   * (default 0). Within a group (`groupBy`) acceptance order still rules.
   */
  priority?: number;
  /**
   * An id that exists already: `'keep'` (default) leaves it and returns `accepted: false`;
   * `'replace'` accepts this message anew under the id (content, type, ttl; RETRIES 0) and keeps
   * its time (`deliverAt`/`delay` when given); `'debounce'` also resets its time to this
   * message's `deliverAt`/`delay` (neither: due now). A paused message stays paused.
   */
  onExisting?: 'keep' | 'replace' | 'debounce';
}

export interface AcceptResult {
  id: string;
  /** false when a message with this id already existed (and `onExisting` was `'keep'`): nothing was changed. */
  accepted: boolean;
  /** true when the id existed and the message was replaced (`onExisting` `'replace'` or `'debounce'`). */
  replaced?: boolean;
}

/** What a handler receives. */
export interface InboxMessage<T = unknown> {
  id: string;
  type: MessageType;
  encoding: PayloadEncoding;
  payload: T;
  /** Database time of acceptance. */
  inserted: Date;
  ttl?: string;
  expiration?: Date;
  /** Failed attempts so far (0 on the first delivery). */
  retries: number;
  /** PRIORITY, when the inbox's `priorities` option is on. */
  priority?: number;
}

export type MessageStatus = 'due' | 'retrying' | 'parked' | 'paused' | 'expired';
export const MESSAGE_STATUSES: readonly MessageStatus[] = ['due', 'retrying', 'parked', 'paused', 'expired'];

/** A row as MessageManagement shows it (no payload body). */
export interface MessageInfo {
  id: string;
  type: MessageType;
  encoding: string;
  status: MessageStatus;
  inserted: Date;
  ttl?: string;
  expiration?: Date;
  retries: number;
  /** Next attempt (retrying) or end of the delivery lease; absent when due, paused or parked. */
  nextRetry?: Date;
  error?: string;
}

export type MessageCounts = Record<MessageStatus, number> & { total: number };
