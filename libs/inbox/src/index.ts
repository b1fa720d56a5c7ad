// @holdfast/inbox: messages accepted in the caller's transaction and delivered to @InboxHandler()
// methods from camunda-bpm-correlate's COR_MESSAGE table. What each group of exports is for:

// The module, its options (as written and as resolved), and the named module's extras.
export { InboxModule } from './inbox.module';
export type { InboxModuleExtras } from './inbox.module-definition';
export type { InboxModuleOptions, InboxRetryOptions, BatchMode, ClusterMode } from './inbox.options';
export type {
  InboxFairShareOptions,
  InboxHistoryOptions,
  InboxRateLimit,
  InboxRateLimits,
  InboxStatsOptions,
} from './inbox.options';
export type { ResolvedInboxOptions } from './options/resolved-inbox-options';

// Handlers and injection: the handler decorator, the InjectX() helpers, a named module's token.
export {
  InboxHandler,
  InjectInboxOptions,
  InjectMessageAcceptor,
  InjectMessageManagement,
  type InboxHandlerOptions,
} from './inbox.decorators';
export { getInboxToken } from './inbox.tokens';
// What a handler is given: its context, and its claim for fenced writes.
export type { InboxHandlerContext } from './explorer/inbox-handler.registry';
export type { InboxDeliveryClaim } from './fencing/message-fence';

// Messages: their shape, accepting them (in the caller's transaction or not).
export type {
  AcceptMessage,
  AcceptResult,
  InboxMessage,
  MessageType,
  PayloadEncoding,
  MessageStatus,
  MessageInfo,
  MessageCounts,
} from './inbox-message';
export { MessageAcceptor } from './acceptor/message-acceptor.service';
export type { AcceptOptions } from './accept-tx/caller-transaction';

// Managing messages (list, retry, delete, pause a type) and their history; the type's label as shown.
export {
  MessageManagement,
  type ListOptions,
  type MessageTypeFilter,
  type TypeCount,
} from './management/message-management.service';
export type { PausedType, TypePauseOptions } from './management/type-pause';
export type { HistoryEntry, HistoryOutcome, InboxStatsMinute } from './history/history.types';
export { messageTypeLabel, parseMessageTypeLabel } from './management/message-type-label';

// Operations: delivery by hand (deliverDue, cleanupExpired), readiness, metrics.
export { InboxDelivery, type DeliveryReport } from './delivery/inbox-delivery.service';
export { InboxHealthIndicator } from './health/inbox.health';
export { InboxMetrics } from './metrics/inbox.metrics';

// The errors a caller can meet (README, "Errors"): each a HoldfastError with a code. The reasons a
// handler's signal aborts with (VisibilityTimeoutError, HandlerTimeoutError, InboxShutdownError)
// are in errors.ts too; a handler tells them apart by `code` or `name`.
export {
  InvalidMessageError,
  PayloadEncodingError,
  PayloadDecodingError,
  MessageNotFoundError,
  InvalidManagementArgumentError,
  InboxClusterModeError,
  InboxNotifyUnsupportedError,
  PauseUnsupportedError,
  InvalidInboxHandlerError,
  InboxClaimLostError,
  InboxTransactionError,
  InboxPriorityColumnError,
  InboxFairShareError,
  PauseTableMissingError,
  InboxRateLimitError,
  RateTableMissingError,
  TraceContextColumnMissingError,
  InboxDeliveryFencedError,
  InvalidFencedManagerError,
} from './errors';

// Schema work: what a table created by an earlier layout needs (INBOX_TABLES, below, has the tables).
export { INBOX_TABLE_UPGRADES } from './store/inbox-table-upgrades';

// The status read-model (and the operator's commands) on this lib's tables: for the CLI, the
// dashboard, tools; INBOX_TABLES, the table specs by role, for DDL and migrations.
export * from './status';
