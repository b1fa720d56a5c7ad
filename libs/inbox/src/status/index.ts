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
export { INBOX_STATUS_TOKENS, INBOX_TABLES } from './inbox-module-parts';
/** A message's history read from its table (`holdfast messages history`); undefined without the table. */
export { readMessageHistory } from '../history/history-reader';
