export { InboxModule } from './inbox.module';
export { INBOX_MODULE_OPTIONS } from './inbox.module-definition';
export { INBOX_OPTIONS } from './inbox.constants';
export type { InboxModuleOptions, InboxRetryOptions, BatchMode, ClusterMode } from './inbox.options';
export { ResolvedInboxOptions } from './inbox.options';
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
export { MESSAGE_STATUSES } from './inbox-message';
export { MessageAcceptor } from './acceptor/message-acceptor.service';
export { MessageManagement, type ListOptions, type TypeCount } from './management/message-management.service';
export { InboxDelivery, type DeliveryReport } from './delivery/inbox-delivery.service';
export { InboxNotifyListener } from './notify/inbox-notify-listener';
export { inboxNotifyChannel } from './notify/notify-channel';
export { nextRetryDelay, type BackoffPolicy } from './delivery/backoff';
export { InboxHandler, type InboxHandlerOptions } from './handler/inbox-handler.decorator';
export type { InboxHandlerContext } from './handler/inbox-handler.registry';
export { InboxHealthIndicator } from './health/inbox.health';
export { InboxMetrics } from './inbox.metrics';
export { InboxClock } from './inbox.clock';
export { COR_MESSAGE_TABLE, COR_MESSAGE_ORDER_INDEX, MAX_ID_LENGTH } from './store/cor-message.table';
export { INBOX_LEASE_TABLE } from './store/inbox-lease.table';
export { INBOX_GROUP_TABLE, INBOX_GROUP_ORDER_INDEX, MAX_GROUP_KEY_LENGTH } from './store/inbox-group.table';
export { FAR_FUTURE } from './store/cor-message.time';
export { CorMessageQueries } from './store/cor-message.queries';
export { corMessageConversionSql, hasEpochMillisLayout } from './store/cor-message.conversion';
export { InboxConnection } from './store/inbox-connection';
export type { InboxLeadership } from './cluster/inbox-leadership';
export * from './errors';
