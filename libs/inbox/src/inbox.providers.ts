import type { Provider } from '@nestjs/common';
import { INBOX_MODULE_OPTIONS } from './inbox.module-definition';
import { INBOX_OPTIONS } from './inbox.tokens';
import { resolveInboxOptions } from './options/inbox-options.schema';

export const inboxOptionsProvider: Provider = {
  provide: INBOX_OPTIONS,
  useFactory: resolveInboxOptions,
  inject: [INBOX_MODULE_OPTIONS],
};
