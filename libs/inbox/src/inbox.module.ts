import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { DatabaseResolver } from '@holdfast/core/kit';
import { MessageAcceptor } from './acceptor/message-acceptor.service';
import { DELIVERY_PROVIDERS } from './delivery/delivery.providers';
import { InboxDelivery } from './delivery/inbox-delivery.service';
import { InboxHandlerExplorer } from './explorer/inbox-handler.explorer';
import { InboxHandlerRegistry } from './explorer/inbox-handler.registry';
import { InboxGauges } from './metrics/inbox-gauges';
import { InboxHealthIndicator } from './health/inbox.health';
import { InboxClock } from './inbox.clock';
import { InboxMetrics } from './metrics/inbox.metrics';
import { ConfigurableInboxModule } from './inbox.module-definition';
import { inboxOptionsProvider } from './inbox.providers';
import { MessageManagement } from './management/message-management.service';
import { InboxNotifyListener } from './notify/inbox-notify-listener';
import { InboxHistory } from './history/inbox-history.service';
import { InboxConnection } from './store/inbox-connection';

/**
 * A durable inbox: `MessageAcceptor` stores messages in `<prefix>COR_MESSAGE`, a delivery loop
 * hands them to `@InboxHandler` methods in batches with retries, backoff and expiry, and
 * `MessageManagement` lets an admin look and act.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    inboxOptionsProvider,
    { provide: DatabaseResolver, useClass: DatabaseResolver },
    InboxConnection,
    InboxClock,
    InboxMetrics,
    InboxHandlerRegistry,
    InboxHandlerExplorer,
    MessageAcceptor,
    MessageManagement,
    ...DELIVERY_PROVIDERS,
    InboxDelivery,
    InboxNotifyListener,
    InboxHealthIndicator,
    InboxGauges,
    InboxHistory,
  ],
  // Exports depend on the inbox's name (inbox.module-definition.ts): the classes for the default
  // inbox, getInboxToken(Class, name) for a named one.
})
export class InboxModule extends ConfigurableInboxModule {}
