import { DEFAULT_INSTANCE_NAME } from '@holdfast/core/kit';
/** The validated options with defaults (one provider for forRoot and forRootAsync). */
export const INBOX_OPTIONS = Symbol('INBOX_OPTIONS');
/** The name of the inbox a module registers (`forRoot({ name })`), `DEFAULT_INBOX_NAME` without one. */
export const INBOX_NAME = Symbol('INBOX_NAME');
export const DEFAULT_INBOX_NAME = DEFAULT_INSTANCE_NAME;
export const INBOX_HANDLER_METADATA = 'holdfast:inbox-handler';
