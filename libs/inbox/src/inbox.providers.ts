import type { Provider } from '@nestjs/common';
import { validateOptions } from '@holdfast/core/kit';
import { INBOX_OPTIONS } from './inbox.constants';
import { INBOX_MODULE_OPTIONS } from './inbox.module-definition';
import { InboxRetryOptionsDto, ResolvedInboxOptions, type InboxModuleOptions } from './inbox.options';

/** Defaults merged and validated in one place, for forRoot and forRootAsync alike. */
export function resolveInboxOptions(options: InboxModuleOptions): ResolvedInboxOptions {
  const plain = Object.fromEntries(Object.entries(options ?? {}).filter(([, v]) => v !== undefined));
  if (plain.retry && typeof plain.retry === 'object') {
    const given = Object.entries(plain.retry).filter(([, v]) => v !== undefined);
    plain.retry = Object.assign(new InboxRetryOptionsDto(), Object.fromEntries(given));
  }
  return validateOptions(ResolvedInboxOptions, plain, 'InboxModule');
}

export const inboxOptionsProvider: Provider = {
  provide: INBOX_OPTIONS,
  useFactory: resolveInboxOptions,
  inject: [INBOX_MODULE_OPTIONS],
};
