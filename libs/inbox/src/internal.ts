// @holdfast/inbox/internal: plumbing shared with Holdfast's own packages (@holdfast/cli,
// @holdfast/dashboard), its benchmarks and tests. Not part of the public API: no stability
// promise between versions. Applications use the main entry, '@holdfast/inbox'.
export { INBOX_MODULE_OPTIONS } from './inbox.module-definition';
export { DEFAULT_INBOX_NAME } from './inbox.constants';
export { INBOX_OPTIONS, INBOX_NAME, getInboxOptionsToken } from './inbox.tokens';
export { MESSAGE_STATUSES } from './inbox-message';
export { inboxNotifyChannel } from './notify/notify-channel';
export { nextRetryDelay, type BackoffPolicy } from './delivery/backoff';
export { InboxClock } from './inbox.clock';
export { COR_MESSAGE_TABLE, COR_MESSAGE_ORDER_INDEX, MAX_ID_LENGTH } from './store/cor-message.table';
export { INBOX_LEASE_TABLE } from './store/inbox-lease.table';
export { INBOX_HISTORY_TABLE, INBOX_STATS_TABLE } from './history/inbox-history.tables';
export { InboxHistory } from './history/inbox-history.service';
export { readMessageHistory } from './history/history-reader';
export { INBOX_GROUP_TABLE, INBOX_GROUP_ORDER_INDEX, MAX_GROUP_KEY_LENGTH } from './store/inbox-group.table';
export { FAR_FUTURE } from './store/next-retry';
export { INBOX_PAUSE_TABLE } from './store/inbox-pause.table';
export { INBOX_RATE_TABLE } from './store/inbox-rate.table';
export { CorMessageStore } from './store/cor-message.store';
export type { MessageRow } from './store/cor-message.rows';
export { statusOf } from './management/message-management.service';
export { InboxConnection } from './store/inbox-connection';
export { InboxNotifyListener } from './notify/inbox-notify-listener';
export type { InboxLeadership } from './cluster/inbox-leadership';
