export { InboxModule } from './inbox.module';
export type { InboxModuleOptions, InboxRetryOptions, BatchMode, ClusterMode } from './inbox.options';
export type { ResolvedInboxOptions } from './options/resolved-inbox-options';
export {
  InboxHandler,
  InjectInboxOptions,
  InjectMessageAcceptor,
  InjectMessageManagement,
  type InboxHandlerOptions,
} from './inbox.decorators';
export { getInboxToken } from './inbox.tokens';
export type { InboxModuleExtras } from './inbox.module-definition';
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
export {
  MessageManagement,
  type ListOptions,
  type MessageTypeFilter,
  type TypeCount,
} from './management/message-management.service';
export type { HistoryEntry, HistoryOutcome, InboxStatsMinute } from './history/history.types';
export type {
  InboxFairShareOptions,
  InboxHistoryOptions,
  InboxRateLimit,
  InboxRateLimits,
  InboxStatsOptions,
} from './inbox.options';
export { messageTypeLabel, parseMessageTypeLabel } from './management/message-type-label';
export type { PausedType, TypePauseOptions } from './management/type-pause';
export { InboxDelivery, type DeliveryReport } from './delivery/inbox-delivery.service';
export type { InboxHandlerContext } from './explorer/inbox-handler.registry';
export type { InboxDeliveryClaim } from './fencing/message-fence';
export { InboxDeliveryFencedError, InvalidFencedManagerError } from './fencing/fencing.errors';
export { InboxHealthIndicator } from './health/inbox.health';
export { InboxMetrics } from './metrics/inbox.metrics';
export * from './errors';
export { TraceContextColumnMissingError } from './tracing/trace-context.errors';
// The status read-model (and the operator's commands) on this lib's tables: for the CLI, the dashboard, tools.
export * from './status';
