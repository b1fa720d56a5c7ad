export {
  InboxTable,
  inboxTable,
  MESSAGE_STATUSES,
  readInboxStatus,
  type InboxRow,
  type InboxStatus,
  type InboxTableOptions,
  type InboxTableStatus,
} from './inbox-table';
