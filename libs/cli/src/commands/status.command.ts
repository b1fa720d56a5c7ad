import { validateTablePrefix } from '@holdfast/core/kit';
import { withDatabase } from '../database';
import { StatusQueries, type HoldfastStatus } from '../status/status-queries';

/**
 * `holdfast status`: owners, masters, inbox counts and live failover entries on DATABASE_URL.
 * Read-only: creates nothing. `inboxMaxRetries` undefined: the inbox counts that depend on it
 * are not guessed (see InboxStatus).
 */
export async function statusCommand(options: {
  url: string | undefined;
  prefix?: string;
  inboxMaxRetries?: number;
}): Promise<HoldfastStatus> {
  const prefix = options.prefix ?? '';
  validateTablePrefix(prefix);
  return withDatabase(options.url, true, (sql) =>
    new StatusQueries(sql, prefix, options.inboxMaxRetries).read(),
  );
}
