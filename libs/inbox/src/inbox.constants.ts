import { DEFAULT_INSTANCE_NAME } from '@holdfast/core/kit';
export const DEFAULT_INBOX_NAME = DEFAULT_INSTANCE_NAME;
/** Metadata key of `@InboxHandler` methods. */
export const INBOX_HANDLER_METADATA = 'holdfast:inbox:handler';
