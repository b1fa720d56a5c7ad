import { ConfigurableModuleBuilder, type Provider, type Type } from '@nestjs/common';
import { MessageAcceptor } from './acceptor/message-acceptor.service';
import { InboxDelivery } from './delivery/inbox-delivery.service';
import { InboxHealthIndicator } from './health/inbox.health';
import { DEFAULT_INBOX_NAME, INBOX_NAME, INBOX_OPTIONS } from './inbox.constants';
import type { InboxModuleOptions } from './inbox.options';
import { getInboxOptionsToken, getInboxToken } from './inbox.tokens';
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

/** The default inbox exports its classes; a named one exports aliases under its own tokens. */
function namedInbox(name: string | undefined): {
  providers: Provider[];
  exports: Array<Provider | string | symbol>;
} {
  const inboxName = name ?? DEFAULT_INBOX_NAME;
  const nameProvider: Provider = { provide: INBOX_NAME, useValue: inboxName };
  if (inboxName === DEFAULT_INBOX_NAME) {
    return { providers: [nameProvider], exports: [INBOX_OPTIONS, ...EXPORTED_SERVICES] };
  }
  const aliases: Provider[] = [
    { provide: getInboxOptionsToken(inboxName), useExisting: INBOX_OPTIONS },
    ...EXPORTED_SERVICES.map((service) => ({
      provide: getInboxToken(service, inboxName),
      useExisting: service,
    })),
  ];
  return {
    providers: [nameProvider, ...aliases],
    exports: aliases.map((alias) => (alias as { provide: string }).provide),
  };
}

export const {
  ConfigurableModuleClass: ConfigurableInboxModule,
  MODULE_OPTIONS_TOKEN: INBOX_MODULE_OPTIONS,
  OPTIONS_TYPE: INBOX_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: INBOX_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<InboxModuleOptions>({ moduleName: 'Inbox' })
  .setClassMethodName('forRoot')
  .setExtras<InboxModuleExtras>({ isGlobal: true, name: undefined }, (definition, extras) => {
    const named = namedInbox(extras.name);
    return {
      ...definition,
      global: extras.isGlobal,
      providers: [...(definition.providers ?? []), ...named.providers],
      exports: [...(definition.exports ?? []), ...named.exports],
    };
  })
  .build();
