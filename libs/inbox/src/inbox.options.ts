import type { DataSourceOption, Dialect, Duration, SchemaMode } from '@holdfast/core/kit';
import type { InboxMessage } from './inbox-message';

export type BatchMode = 'fail-first' | 'all';
export type ClusterMode = 'leader' | 'competing';

export interface InboxRetryOptions {
  /** Failed attempts before a message is parked (default 5). */
  maxRetries?: number;
  initialDelay?: Duration;
  multiplier?: number;
  maxDelay?: Duration;
  /** Fraction (0..1) of each delay taken off at random, so failed messages do not retry in lockstep (default 0.2). */
  jitter?: number;
}

export interface InboxModuleOptions {
  dataSource?: DataSourceOption;
  dialect?: Dialect;
  tablePrefix?: string;
  schema?: SchemaMode;
  pollInterval?: Duration;
  batchSize?: number;
  batchMode?: BatchMode;
  /**
   * Strict order per group: the messages of a group are delivered one at a time in acceptance
   * order (INSERTED, ID), across batches, nodes and retries; groups run in parallel. A failing
   * message holds back its group until it succeeds, is parked or expires. Called at accept (the
   * group is stored in `<prefix>HOLDFAST_INBOX_GROUP`, at most 255 characters; a throw refuses
   * the message) and for messages without a stored group (written by a Java client), which are
   * only ordered within their batch.
   */
  groupBy?: (message: InboxMessage) => string;
  /**
   * Priorities (default false): `accept({ priority })`, an integer from -32768 to 32767, lower
   * first (default 0). Needs the opt-in column `PRIORITY` of `<prefix>COR_MESSAGE` (created with
   * the table under `schema: 'create'`, else migration `1764000000412-cor-message-priority`): a
   * table without it stops startup with `InboxPriorityColumnError`.
   */
  priorities?: boolean;
  /**
   * Fair share across message types (default off): a claim takes at most `perKey` messages of
   * one type name, round by round (every name's first due message, then every name's second, …),
   * so a name with a large backlog cannot hold the others back. Claims reach each name through
   * the index COR_MESSAGE_TYPE_IDX (created under `schema: 'create'`, else migration
   * `1764000000413-cor-message-type-index`). Not with `groupBy` or `priorities`
   * (`InboxFairShareError`).
   */
  fairShare?: InboxFairShareOptions;
  /**
   * Cluster-wide rate limits per message type name (default none): `{ 'send-email': { limit: 100,
   * interval: '1m' } }` delivers at most 100 messages named `send-email` per minute across every
   * node of the inbox, counted in windows of the interval on the database clock (permits in
   * `<prefix>HOLDFAST_INBOX_RATE`, created under `schema: 'create'`, else migration
   * `1764000000414-create-inbox-rate`; missing: `RateTableMissingError`). Claimed messages beyond
   * the window's permits go back, due at the next window, without counting an attempt. Types
   * without an entry are not limited and cost nothing. Bad entries: `InboxRateLimitError`.
   */
  rateLimits?: InboxRateLimits;
  retry?: InboxRetryOptions;
  /** TTL for messages that bring none: an ISO-8601 duration ('PT1H') or a Duration (ms, '1h'). */
  defaultTtl?: Duration;
  /** Default 'competing' on postgres and mariadb/mysql, 'leader' on SQLite (its only mode). */
  cluster?: ClusterMode;
  /**
   * How long a claim lasts without news from its node (default '5m'). While handlers run, the
   * node renews the claims of every message it holds (running, waiting for its turn, or
   * delivered and not yet deleted) in one UPDATE per heartbeat, every third of this time: a
   * message is only taken by another node when its node died or lost the database for this
   * long. A node that cannot renew a claim before it ends (cut off from the database, or the row
   * was taken meanwhile) aborts the handler's `signal` with an `InboxClaimLostError` and does not
   * record its outcome.
   */
  visibilityTimeout?: Duration;
  /**
   * How long one handler call may run before it counts as a failed attempt (its `signal` aborts,
   * the message is retried with backoff, then parked). Default: the `visibilityTimeout` (the
   * error is then a `VisibilityTimeoutError`); a longer time lets slow handlers run on while
   * heartbeats keep their claim; 0 turns the limit off (a handler that never settles then holds
   * its message and its concurrency slot until the node stops).
   */
  handlerTimeout?: Duration;
  /**
   * How many handlers run at once on this node, across all groups and types (default: the
   * largest claim, 10 × `batchSize` (1000): claims grow to 10 × `batchSize` on a backlog, and
   * half of a claim runs while the other half waits for its delete). A
   * message keeps its slot until it is deleted, so this also bounds what a crash delivers again:
   * set it lower for handlers that must not run that many at once. A message waits for a free slot while heartbeats keep its claim. A per-type
   * limit is `@InboxHandler({ …, concurrency })`.
   */
  concurrency?: number;
  /**
   * Delivered messages are deleted in batches: when this many have finished (default: the
   * half the largest claim, 5 × `batchSize` (500); at most half of `concurrency`), or `completionFlushInterval` after the first of them, whichever
   * comes first — not at the end of the claimed batch. Deletes go out side by side. After a
   * crash only these and the running ones are delivered again. On SQLite (one writer, a
   * statement at a time) the default is the whole largest claim, at most `concurrency`: one
   * delete per claim.
   */
  completionBatchSize?: number;
  /** The longest a delivered message waits for its delete (default '10ms'); see completionBatchSize. */
  completionFlushInterval?: Duration;
  /**
   * How long the server lets a transaction of the inbox sit idle (its client silent: a frozen
   * process, a lost network) before it ends it and frees its rows (default '30s', and never
   * more than `visibilityTimeout`). MariaDB `idle_transaction_timeout`, MySQL `wait_timeout`,
   * whole seconds. 0 turns it off.
   */
  idleInTransactionTimeout?: Duration;
  /**
   * How long the inbox waits for its database, client-side: for a pooled connection, and for the
   * answer to each statement (claims, heartbeats, deletes, hand-backs, cleanup, accepts). Default
   * '10s'. A statement that gets no answer in time fails
   * with a `SqlTimeoutError` and its connection is destroyed, not returned to the pool: after a
   * silent network path (packets dropped, nothing closed) the node delivers again within about one
   * `pollInterval` plus this bound once the network is back. A claim that timed out loses
   * nothing: its rows come back when their lease ends, as after a crash. PostgreSQL, MySQL and
   * MariaDB; 0 turns the bound off.
   */
  statementTimeout?: Duration;
  /** How often expired messages are deleted (default '1m'). */
  cleanupInterval?: Duration;
  /**
   * At shutdown (`app.close()`, SIGTERM with enableShutdownHooks) the node stops claiming and
   * starting messages, hands every claimed message it has not started back at once (due now, for
   * another node's next poll), and lets running handlers finish for at most this long; then their
   * `signal` aborts and their messages are handed back too. Default 10s.
   */
  shutdownGrace?: Duration;
  /**
   * An accept on this node starts its delivery run at once instead of at the next poll (default
   * true). Other nodes find the message at their next poll.
   */
  wakeOnAccept?: boolean;
  /**
   * PostgreSQL LISTEN/NOTIFY (default: on with PostgreSQL, off elsewhere; `true` on another
   * database stops startup). Every accept transaction sends one notification on a channel named
   * after the table, delivered when it commits; each delivering node LISTENs on a dedicated
   * connection (not a pooled one) and starts a delivery run when one arrives, so a message
   * accepted on another node is delivered at once rather than at the next poll. Polling always
   * stays on as the fallback (the listener down, writers that do not notify). Wake-ups follow
   * `wakeOnAccept`: with it false, notifications wake nothing.
   */
  notify?: boolean;
  /**
   * The PostgreSQL URL the LISTEN connection opens, when the DataSource goes through PgBouncer
   * in transaction mode (where LISTEN succeeds and then hears nothing): the server itself, or a
   * session-mode pool. Default: the DataSource's own connection options. A startup probe
   * (a NOTIFY sent through the DataSource) checks that the listener hears; if it does not, the
   * node warns once and delivers by polling.
   */
  notifyListenUrl?: string;
  /**
   * How often a listening node checks that its LISTEN connection still hears (default '30s'): it
   * sends itself a notification through the DataSource, as at startup. A connection that no
   * longer hears (a network path that drops packets without closing anything keeps it open and
   * silent) is closed and opened again. Polling covers the meantime.
   */
  notifyCheckInterval?: Duration;
  /** Rows deleted per cleanup statement, each in its own short statement (default 5000). */
  cleanupChunkSize?: number;
  /** Rows per multi-row insert in acceptAll (default 500). */
  acceptChunkSize?: number;
  /** A message whose type has no handler is looked at again after this long (default '1m'). */
  unhandledDelay?: Duration;
  /** false: this node only accepts; it never delivers or cleans (default true). */
  deliver?: boolean;
  /** Leader mode: the Simba mutex whose owner delivers (default 'holdfast-inbox'). */
  leaderMutex?: string;
  /**
   * Carry the accepting trace context (OpenTelemetry) to the delivery, stored with each message in
   * Holdfast's own nullable column `TRACE_CONTEXT` (default false: the column is neither created
   * nor read). `true`: `schema: 'create'` makes a new table with it; a live table without it stops
   * startup (`TraceContextColumnMissingError`, migration `1764000000410-cor-message-trace-context`).
   * `'when-present'`: carried where the table has the column, nothing carried (and no error) on a
   * table without it, such as the seed's.
   */
  traceContext?: boolean | 'when-present';
  /**
   * The time source for due/expiry/backoff decisions, in epoch ms. Default: the database clock.
   * Meant for tests (a controllable clock); every node must use the same clock.
   */
  clock?: () => number | Promise<number>;
  /**
   * Opt-in history of outcomes in `<prefix>HOLDFAST_INBOX_HISTORY`: every attempt (delivered,
   * failed with its error, parked) and every expiry, per message, for `MessageManagement.history`,
   * the dashboard and `holdfast messages history`. `true` for the defaults. Off by default: no
   * table, no write.
   */
  history?: boolean | InboxHistoryOptions;
  /**
   * Opt-in statistics per minute in `<prefix>HOLDFAST_INBOX_STATS` (delivered, failed, parked per
   * node; depth, parked and leader sampled at each cleanup tick), for the dashboard's charts of the
   * last hour and `MessageManagement.stats`. `true` for the defaults. Off by default.
   */
  stats?: boolean | InboxStatsOptions;
}

export interface InboxHistoryOptions {
  /** Rows older than this are deleted at the cleanup tick (default '7d'). */
  retention?: Duration;
  /** At most this many rows: the oldest beyond it are deleted at the cleanup tick (default 100,000). */
  maxRows?: number;
  /** How often a node writes what it noted, in one multi-row INSERT (default '1s'; sooner at 500). */
  flushInterval?: Duration;
  /** Records a node keeps in memory while it cannot write them; beyond, new ones are dropped and counted (default 10,000). */
  maxBuffered?: number;
}

export interface InboxStatsOptions {
  /** Minutes older than this are deleted at the cleanup tick (default '24h'). */
  retention?: Duration;
}

/** `rateLimits` of `InboxModule.forRoot()`: by message type name (PAYLOAD_TYPE_NAME). */
export type InboxRateLimits = Record<string, InboxRateLimit>;

/** One type's rate limit: at most `limit` deliveries per `interval` window, across the cluster. */
export interface InboxRateLimit {
  /** Deliveries per window (1 to 1,000,000). */
  limit: number;
  /** The window (1 ms to 1 day): an ISO-8601 duration ('PT1M') or a Duration (ms, '1m'). */
  interval: Duration;
}

/** `fairShare` of `InboxModule.forRoot()`. */
export interface InboxFairShareOptions {
  /** Most messages of one type name in one claim (1 to 10,000). */
  perKey: number;
}
