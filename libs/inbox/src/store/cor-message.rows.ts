/** The rows of `<prefix>COR_MESSAGE` as the inbox writes and reads them. */

/** A row to insert: everything already validated and encoded. */
export interface NewMessageRow {
  id: string;
  encoding: string;
  namespace: string | null;
  name: string;
  revision: string | null;
  payload: Buffer;
  ttl: string | null;
  /** Relative expiry (INSERTED + ttlMs) … */
  ttlMs: number | null;
  /** … or an absolute one in epoch ms. */
  expiration: number | null;
  /** Not before this time (epoch ms, `deliverAt`), written to NEXT_RETRY … */
  notBefore?: number;
  /** … or not before INSERTED + this many ms (`delay`). */
  delayMs?: number;
  /** Its group (`groupBy`), written to `<prefix>HOLDFAST_INBOX_GROUP` in the same transaction. */
  group?: string;
  /** The accepting trace context (TRACE_CONTEXT, when the inbox carries it). */
  traceContext?: string;
  /** PRIORITY (lower first; 0 when not given), written only when priorities are on. */
  priority?: number;
  /** An id that exists already is replaced (or debounced) instead of refused (see CorMessageReplace). */
  onExisting?: 'replace' | 'debounce';
}

/** A row as read back (BIGINTs converted). */
export interface MessageRow {
  id: string;
  encoding: string;
  namespace: string | null;
  name: string;
  revision: string | null;
  payload?: unknown;
  inserted: number;
  ttl: string | null;
  expiration: number | null;
  retries: number;
  nextRetry: number | null;
  error: string | null;
  /** Its group in `<prefix>HOLDFAST_INBOX_GROUP` (grouped claims only; undefined: no group). */
  group?: string;
  /** The accepting trace context stored with it (claims, when the inbox carries it). */
  traceContext?: string;
  /** PRIORITY, read only when priorities are on. */
  priority?: number;
}

export interface RawRow {
  id: string;
  payload_encoding: string;
  ns: string | null;
  name: string;
  revision: string | null;
  payload?: unknown;
  inserted_ms: unknown;
  ttl: string | null;
  expiration_ms: unknown;
  retries: unknown;
  next_retry_ms: unknown;
  error: string | null;
  group_key?: string | null;
  trace_context?: string | null;
  priority?: unknown;
}

/** A claim this node holds: the row and the lease end it wrote into NEXT_RETRY (epoch ms). */
export interface Lease {
  id: string;
  until: number;
}

/** `now` is either a bound value (an injected clock) or undefined: the database clock inline. */
export type Now = number | undefined;
