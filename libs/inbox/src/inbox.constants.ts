/** The validated options with defaults (one provider for forRoot and forRootAsync). */
export const INBOX_OPTIONS = Symbol('INBOX_OPTIONS');
export const INBOX_HANDLER_METADATA = 'holdfast:inbox-handler';
