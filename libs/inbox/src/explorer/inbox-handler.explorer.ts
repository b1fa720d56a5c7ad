import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { discoverHandlers } from '@holdfast/core/kit';
import { DEFAULT_INBOX_NAME, INBOX_HANDLER_METADATA } from '../inbox.constants';
import { INBOX_NAME } from '../inbox.tokens';
import { messageTypeLabel } from '../management/message-type-label';
import type { InboxHandlerOptions } from '../decorators/inbox-handler.decorator';
import { InboxHandlerRegistry } from './inbox-handler.registry';

/** Finds @InboxHandler methods on every provider and controller (like @nestjs/schedule's explorer). */
@Injectable()
export class InboxHandlerExplorer implements OnModuleInit {
  private readonly logger = new Logger(InboxHandlerExplorer.name);

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly registry: InboxHandlerRegistry,
    @Inject(INBOX_NAME) private readonly inboxName: string,
  ) {}

  onModuleInit(): void {
    for (const {
      metadata: options,
      declaredOn: name,
      instance,
      method,
    } of discoverHandlers<InboxHandlerOptions>(
      this.discovery,
      this.scanner,
      INBOX_HANDLER_METADATA,
      '@InboxHandler()',
    )) {
      // Each inbox takes the handlers addressed to it (`inbox`, default 'default') and no other.
      const { concurrency, inbox = DEFAULT_INBOX_NAME, ...type } = options;
      if (inbox !== this.inboxName) continue;
      this.registry.register({
        type,
        name,
        ...(concurrency !== undefined ? { concurrency } : {}),
        handle: (message, context) => method.call(instance, message, context),
      });
      this.logger.log(`Inbox handler ${name} for ${messageTypeLabel(type)}`);
    }
  }
}
