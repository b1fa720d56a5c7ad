import { SetMetadata } from '@nestjs/common';
import { InvalidInboxHandlerError } from '../errors';
import { INBOX_HANDLER_METADATA } from '../inbox.constants';
import type { MessageType } from '../inbox-message';

/** Which messages a handler takes (`name` always; `namespace` and `revision` when given), and how many at once. */
export interface InboxHandlerOptions extends MessageType {
  /**
   * At most this many calls of this handler run at once on one node (an integer ≥ 1; default:
   * only the node's `concurrency` bounds it). For a handler that calls a rate-limited API or
   * holds scarce resources; messages of its type wait for a slot while their claim is renewed.
   */
  concurrency?: number;
  /**
   * The inbox whose messages this handler takes, for an application with several
   * (`InboxModule.forRoot({ name })`); default: the default inbox.
   */
  inbox?: string;
}

/**
 * Marks a provider method `(message: InboxMessage<T>) => Promise<void>` as the handler of a
 * message type. Metadata only: InboxHandlerExplorer finds it at bootstrap. A bad `concurrency`
 * throws an `InvalidInboxHandlerError` where the decorator is applied.
 */
export const InboxHandler = (options: InboxHandlerOptions): MethodDecorator => {
  const { concurrency } = options;
  if (
    concurrency !== undefined &&
    (typeof concurrency !== 'number' || !Number.isInteger(concurrency) || concurrency < 1)
  ) {
    throw new InvalidInboxHandlerError('concurrency', concurrency, 'must be an integer ≥ 1');
  }
  return SetMetadata(INBOX_HANDLER_METADATA, { ...options });
};
