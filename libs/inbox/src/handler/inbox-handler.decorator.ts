import { SetMetadata } from '@nestjs/common';
import { INBOX_HANDLER_METADATA } from '../inbox.constants';
import type { MessageType } from '../inbox-message';

/** Which messages a handler takes: `name` always; `namespace` and `revision` when given. */
export type InboxHandlerOptions = MessageType;

/**
 * Marks a provider method `(message: InboxMessage<T>) => Promise<void>` as the handler of a
 * message type. Metadata only: InboxHandlerExplorer finds it at bootstrap.
 */
export const InboxHandler = (options: InboxHandlerOptions): MethodDecorator =>
  SetMetadata(INBOX_HANDLER_METADATA, { ...options });
