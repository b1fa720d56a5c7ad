import { HoldfastError } from '@holdfast/core/kit';

/** A message given to MessageAcceptor was refused; nothing of the call was stored. */
export class InvalidMessageError extends HoldfastError {
  constructor(
    readonly field: string,
    readonly value: unknown,
    reason: string,
    readonly index?: number,
  ) {
    super(
      `Invalid inbox message${index === undefined ? '' : ` at index ${index}`}: '${field}' = ${show(value)}: ${reason}. ` +
        `Nothing was stored.`,
      'HOLDFAST_INBOX_INVALID_MESSAGE',
    );
  }
}

/** A payload could not be encoded with the requested encoding. */
export class PayloadEncodingError extends HoldfastError {
  constructor(
    readonly encoding: string,
    detail: string,
    readonly index?: number,
    options?: { cause?: unknown },
  ) {
    super(
      `Inbox message${index === undefined ? '' : ` at index ${index}`}: the payload cannot be encoded as '${encoding}': ${detail}. ` +
        `Use encoding 'json' for JSON-serializable values or 'binary' for a Buffer. Nothing was stored.`,
      'HOLDFAST_INBOX_PAYLOAD_ENCODING',
      options,
    );
  }
}

/** A stored payload could not be decoded (corrupt bytes, unknown encoding). */
export class PayloadDecodingError extends HoldfastError {
  constructor(
    readonly id: string,
    readonly encoding: string,
    options?: { cause?: unknown },
  ) {
    super(
      `Inbox message '${id}': its stored payload cannot be decoded as '${encoding}'.`,
      'HOLDFAST_INBOX_PAYLOAD_DECODING',
      options,
    );
  }
}

/** A management call named a message that is not in the inbox. */
export class MessageNotFoundError extends HoldfastError {
  constructor(readonly id: string) {
    super(
      `Inbox message '${id}' does not exist (delivered, expired and cleaned, or deleted).`,
      'HOLDFAST_INBOX_NOT_FOUND',
    );
  }
}

/** A management call got an argument it cannot use. */
export class InvalidManagementArgumentError extends HoldfastError {
  constructor(
    readonly argument: string,
    readonly value: unknown,
    expected: string,
  ) {
    super(
      `MessageManagement: '${argument}' = ${show(value)}: ${expected}.`,
      'HOLDFAST_INBOX_INVALID_ARGUMENT',
    );
  }
}

/** The chosen cluster mode cannot work with this database or setup. */
export class InboxClusterModeError extends HoldfastError {
  constructor(
    readonly mode: string,
    detail: string,
  ) {
    super(`InboxModule cluster mode '${mode}': ${detail}`, 'HOLDFAST_INBOX_CLUSTER_MODE');
  }
}

/** `notify: true` on a database without LISTEN/NOTIFY. */
export class InboxNotifyUnsupportedError extends HoldfastError {
  constructor(readonly dialect: string) {
    super(
      `InboxModule notify: true needs PostgreSQL LISTEN/NOTIFY; ${dialect} has none. Leave notify unset ` +
        `(the inbox polls every pollInterval, and an accept still wakes its own node) or set it to false.`,
      'HOLDFAST_INBOX_NOTIFY_UNSUPPORTED',
    );
  }
}

/** The table's NEXT_RETRY cannot hold the pause marker (a MySQL/MariaDB TIMESTAMP ends in 2038). */
export class PauseUnsupportedError extends HoldfastError {
  constructor(
    readonly table: string,
    readonly id: string,
  ) {
    super(
      `Cannot pause inbox message '${id}': ${table}.NEXT_RETRY is a TIMESTAMP, which ends in January 2038 ` +
        `and cannot hold the pause marker 4999-12-03T10:15:30Z (camunda-bpm-correlate's FAR_FUTURE). ` +
        `Use DATETIME(3) for INSERTED, EXPIRATION and NEXT_RETRY to pause messages.`,
      'HOLDFAST_INBOX_PAUSE_UNSUPPORTED',
    );
  }
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (typeof value === 'function') return `[function ${value.name || 'anonymous'}]`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** An `@InboxHandler(...)` was given an option it cannot use (thrown where the decorator is applied). */
export class InvalidInboxHandlerError extends HoldfastError {
  constructor(
    readonly option: string,
    readonly value: unknown,
    expected: string,
  ) {
    super(`@InboxHandler: '${option}' = ${show(value)}: ${expected}.`, 'HOLDFAST_INBOX_INVALID_HANDLER');
  }
}

/**
 * A handler's `signal` reason when this node no longer holds the message's claim: the row was
 * taken by another node or changed by an admin, or the heartbeats failed until the lease ended
 * (the node lost the database). The handler's outcome is not recorded.
 */
export class InboxClaimLostError extends HoldfastError {
  constructor(
    readonly id: string,
    detail: string,
  ) {
    super(
      `Inbox message '${id}': this node lost its claim (${detail}); its outcome is not recorded here.`,
      'HOLDFAST_INBOX_CLAIM_LOST',
    );
    this.name = 'InboxClaimLostError';
  }
}

/**
 * `accept`/`acceptAll` got a transaction it cannot write into: a manager or QueryRunner of another
 * DataSource than the inbox's, a released QueryRunner, or both `manager` and `queryRunner`.
 * Nothing was stored.
 */
export class InboxTransactionError extends HoldfastError {
  constructor(
    readonly option: string,
    detail: string,
  ) {
    super(`Inbox accept: '${option}': ${detail}. Nothing was stored.`, 'HOLDFAST_INBOX_TRANSACTION');
  }
}

/**
 * `priorities: true` on a `<prefix>COR_MESSAGE` without the opt-in `PRIORITY` column (a table of
 * camunda-bpm-correlate's DDL, or Holdfast's created before priorities were on). Startup stops.
 */
export class InboxPriorityColumnError extends HoldfastError {
  constructor(
    readonly table: string,
    ddl: string,
  ) {
    super(
      `Inbox option 'priorities' is on, but ${table} has no PRIORITY column. Run migration ` +
        `1764000000412-cor-message-priority (npx holdfast migrate), or by hand: ${ddl}; ` +
        `or leave 'priorities' off (the seed's columns alone work without it).`,
      'HOLDFAST_INBOX_PRIORITY_COLUMN',
    );
  }
}

/** `fairShare` is on together with an option it does not work with in this version. */
export class InboxFairShareError extends HoldfastError {
  constructor(readonly option: string) {
    super(
      `Inbox option 'fairShare' cannot be combined with '${option}': a fair-share claim counts shares by ` +
        `message type name in acceptance order, and does not keep '${option}''s order. Leave one of them off.`,
      'HOLDFAST_INBOX_FAIR_SHARE',
    );
  }
}

/** A type pause needs `<prefix>HOLDFAST_INBOX_PAUSE`, and the inbox's database has none. */
export class PauseTableMissingError extends HoldfastError {
  constructor(readonly table: string) {
    super(
      `Cannot pause or resume a message type: ${table} does not exist. Run the Holdfast migrations ` +
        `(HOLDFAST_MIGRATIONS, or \`holdfast migrate\`), or start the inbox with schema: 'create'.`,
      'HOLDFAST_INBOX_PAUSE_TABLE_MISSING',
    );
  }
}

/** `rateLimits` names a type or a limit the inbox cannot keep (checked at startup). */
export class InboxRateLimitError extends HoldfastError {
  constructor(
    readonly type: string,
    readonly field: string,
    reason: string,
  ) {
    super(
      `Inbox option 'rateLimits': ${type === '' ? 'the type name' : `'${type}'`}${field ? ` ${field}` : ''} ${reason}. ` +
        `Each entry is { [messageTypeName]: { limit: integer 1 to 1,000,000, interval: a duration of 1 ms to 1 day } }.`,
      'HOLDFAST_INBOX_RATE_LIMIT',
    );
  }
}

/** `rateLimits` is set, and the inbox's database has no `<prefix>HOLDFAST_INBOX_RATE`. */
export class RateTableMissingError extends HoldfastError {
  constructor(readonly table: string) {
    super(
      `Inbox option 'rateLimits' is set, but ${table} does not exist. Run migration ` +
        `1764000000414-create-inbox-rate (HOLDFAST_MIGRATIONS, or \`holdfast migrate\`), or start the inbox ` +
        `with schema: 'create'.`,
      'HOLDFAST_INBOX_RATE_TABLE_MISSING',
    );
  }
}

/**
 * `traceContext: true` on a `<prefix>COR_MESSAGE` without Holdfast's TRACE_CONTEXT column (a
 * table made by camunda-bpm-correlate's DDL, or by Holdfast before the option): startup stops,
 * naming the column and the migration that adds it.
 */
export class TraceContextColumnMissingError extends HoldfastError {
  constructor(
    readonly table: string,
    readonly migration: string,
  ) {
    super(
      `InboxModule option traceContext: true needs the column TRACE_CONTEXT on ${table}, which it does not have. ` +
        `Run migration ${migration} (npx holdfast migrate), or add it by hand ` +
        `(ALTER TABLE ${table} ADD TRACE_CONTEXT TEXT), or set traceContext: 'when-present' to deliver ` +
        `without the accepting context where the column is missing.`,
      'HOLDFAST_INBOX_TRACE_CONTEXT_COLUMN',
    );
  }
}

/**
 * A handler's fenced write was refused: the message it is handling is no longer held by this
 * delivery's claim (its lease ran out and another node claimed it, or it was delivered and
 * deleted, failed, released or changed by an admin since). Nothing of the write was committed.
 */
export class InboxDeliveryFencedError extends HoldfastError {
  constructor(
    readonly id: string,
    readonly token: number,
  ) {
    super(
      `Inbox message '${id}': the fenced write was refused, this delivery (claim token ${token}) no longer holds ` +
        `the message (its lease ran out and another node claimed it, or it was finished or changed since). ` +
        `Nothing of the write was committed.`,
      'HOLDFAST_INBOX_DELIVERY_FENCED',
    );
    this.name = 'InboxDeliveryFencedError';
  }
}

/** `claim.fenced(manager, …)` was given something that is not a TypeORM EntityManager or DataSource. */
export class InvalidFencedManagerError extends HoldfastError {
  constructor(readonly value: unknown) {
    super(
      `claim.fenced(manager, work): 'manager' must be a TypeORM EntityManager or DataSource on the inbox's database, ` +
        `got ${value === null ? 'null' : typeof value}.`,
      'HOLDFAST_INBOX_INVALID_FENCED_MANAGER',
    );
    this.name = 'InvalidFencedManagerError';
  }
}

/**
 * A handler's fenced write outside a delivery (the handler called by hand, not by the inbox): such
 * a run holds no claim, so every fenced write is refused.
 */
export class NoDeliveryClaimError extends HoldfastError {
  constructor() {
    super('No inbox table outside a delivery', 'HOLDFAST_INBOX_NO_DELIVERY_CLAIM');
  }
}

/**
 * The reason a handler's signal aborts with when the call ran past the visibility timeout
 * (`handlerTimeout` not set): the call counts as a failed attempt.
 */
export class VisibilityTimeoutError extends HoldfastError {
  constructor(id: string, ms: number) {
    super(
      `Handler for message '${id}' did not finish within the visibility timeout (${ms} ms; set handlerTimeout to allow longer)`,
      'HOLDFAST_INBOX_VISIBILITY_TIMEOUT',
    );
    this.name = 'VisibilityTimeoutError';
  }
}

/** The reason a handler's signal aborts with when the call ran past `handlerTimeout`: a failed attempt. */
export class HandlerTimeoutError extends HoldfastError {
  constructor(id: string, ms: number) {
    super(
      `Handler for message '${id}' did not finish within handlerTimeout (${ms} ms)`,
      'HOLDFAST_INBOX_HANDLER_TIMEOUT',
    );
    this.name = 'HandlerTimeoutError';
  }
}

/** The handler's signal reason when the node shut down before it finished (the message is handed back). */
export class InboxShutdownError extends HoldfastError {
  constructor(graceMs: number) {
    super(
      `The inbox is shutting down and the handler did not finish within shutdownGrace (${graceMs} ms)`,
      'HOLDFAST_INBOX_SHUTDOWN',
    );
    this.name = 'InboxShutdownError';
  }
}

/** A statement of the delivery loop got no answer in time (it may still be waiting): an outage, internal. */
export class NoAnswerError extends HoldfastError {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`, 'HOLDFAST_INBOX_NO_ANSWER');
    this.name = 'NoAnswerError';
  }
}
