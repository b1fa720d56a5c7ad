/** The validated options with defaults (one provider for forRoot and forRootAsync). */
export const INBOX_OPTIONS = Symbol('INBOX_OPTIONS');
/** The SqlClient the inbox runs its SQL through. */
export const INBOX_SQL_CLIENT = Symbol('INBOX_SQL_CLIENT');
/** Who may deliver on this node (competing: always; leader: the Simba mutex owner). */
export const INBOX_LEADERSHIP = Symbol('INBOX_LEADERSHIP');
export const INBOX_HANDLER_METADATA = 'holdfast:inbox-handler';
