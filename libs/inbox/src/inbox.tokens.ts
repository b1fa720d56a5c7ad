import type { Type } from '@nestjs/common';
import { InvalidOptionsError, NamedInstances } from '@holdfast/core/kit';

/** The validated options with defaults (one provider for forRoot and forRootAsync). */
export const INBOX_OPTIONS = Symbol('holdfast:inbox:options');
/** The name of the inbox a module registers (`forRoot({ name })`), `DEFAULT_INBOX_NAME` without one. */
export const INBOX_NAME = Symbol('holdfast:inbox:name');

/** The inboxes of an application: the default one, and those registered with `forRoot({ name })`. */
export const INBOXES = new NamedInstances({
  lib: 'inbox',
  optionsToken: INBOX_OPTIONS,
  nameToken: INBOX_NAME,
  invalidName: (message) => new InvalidOptionsError('InboxModule', [message]),
});

/**
 * The injection token of one inbox's service, as `getDataSourceToken(name)` in `@nestjs/typeorm`:
 * the class itself for the default inbox (`app.get(MessageAcceptor)`), and
 * `holdfast:inbox:<name>:<Class>` for the inbox registered with `name`.
 */
export function getInboxToken<T>(service: Type<T>, name?: string): Type<T> | string {
  return INBOXES.token(service, name);
}

/** The token of one inbox's validated options (`@InjectInboxOptions(name)`). */
export function getInboxOptionsToken(name?: string): symbol | string {
  return INBOXES.optionsToken(name);
}
