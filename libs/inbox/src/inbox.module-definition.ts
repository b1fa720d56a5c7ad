import { ConfigurableModuleBuilder, type Type } from '@nestjs/common';
import { MessageAcceptor } from './acceptor/message-acceptor.service';
import { InboxDelivery } from './delivery/inbox-delivery.service';
import { InboxHealthIndicator } from './health/inbox.health';
import type { InboxModuleOptions } from './inbox.options';
import { INBOXES } from './inbox.tokens';
import { MessageManagement } from './management/message-management.service';
import { InboxNotifyListener } from './notify/inbox-notify-listener';

/** forRoot extras: known before any options factory runs, so they can shape the module. */
export interface InboxModuleExtras {
  /** Global unless `false` (as every Holdfast module). */
  isGlobal?: boolean;
  /**
   * A second (third, …) inbox in one application, on its own table (give it its own
   * `tablePrefix`): its services are exported under `getInboxToken(Class, name)` and injected with
   * `@InjectMessageAcceptor(name)`, `@InjectMessageManagement(name)`, `@InjectInboxOptions(name)`;
   * it delivers only to `@InboxHandler({ inbox: name, … })` methods. Without a name (or
   * `'default'`) the inbox is the default one, exported under the classes themselves.
   */
  name?: string;
}

const EXPORTED_SERVICES: Array<Type<unknown>> = [
  MessageAcceptor,
  MessageManagement,
  InboxDelivery,
  InboxNotifyListener,
  InboxHealthIndicator,
];

export const {
  ConfigurableModuleClass: ConfigurableInboxModule,
  MODULE_OPTIONS_TOKEN: INBOX_MODULE_OPTIONS,
  OPTIONS_TYPE: INBOX_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: INBOX_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<InboxModuleOptions>({ moduleName: 'Inbox' })
  .setClassMethodName('forRoot')
  .setExtras<InboxModuleExtras>({ isGlobal: true, name: undefined }, INBOXES.extras(EXPORTED_SERVICES))
  .build();
