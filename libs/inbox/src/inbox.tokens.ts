import type { Type } from '@nestjs/common';
import { DEFAULT_INBOX_NAME, INBOX_OPTIONS } from './inbox.constants';

function isDefault(name: string | undefined): boolean {
  return name === undefined || name === DEFAULT_INBOX_NAME;
}

/**
 * The injection token of one inbox's service, as `getDataSourceToken(name)` in `@nestjs/typeorm`:
 * the class itself for the default inbox (`app.get(MessageAcceptor)`), and
 * `holdfast:inbox:<name>:<Class>` for the inbox registered with `name`.
 */
export function getInboxToken<T>(service: Type<T>, name?: string): Type<T> | string {
  return isDefault(name) ? service : `holdfast:inbox:${name}:${service.name}`;
}

/** The token of one inbox's validated options (`@InjectInboxOptions(name)`). */
export function getInboxOptionsToken(name?: string): symbol | string {
  return isDefault(name) ? INBOX_OPTIONS : `holdfast:inbox:${name}:options`;
}
