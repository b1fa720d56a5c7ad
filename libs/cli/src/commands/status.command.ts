import { validateTablePrefix } from '@holdfast/core/kit';
import { withDatabase } from '../database';
import { NoHoldfastTablesError } from '../errors';
import { holdfastPrefixes } from '../holdfast-prefixes';
import { StatusQueries, type HoldfastStatus } from '../status/status-queries';

/**
 * `holdfast status`: owners, masters, inbox counts and live failover entries on DATABASE_URL.
 * Read-only: creates nothing. `inboxMaxRetries` undefined: the inbox counts that depend on it
 * are not guessed (see InboxStatus). No Holdfast table at all under the prefix is an error
 * (NoHoldfastTablesError, naming the prefixes that do have tables), not an empty status.
 */
export async function statusCommand(options: {
  url: string | undefined;
  prefix?: string;
  inboxMaxRetries?: number;
}): Promise<HoldfastStatus> {
  const prefix = options.prefix ?? '';
  validateTablePrefix(prefix);
  return withDatabase(options.url, true, async (sql, dataSource) => {
    const status = await new StatusQueries(sql, prefix, options.inboxMaxRetries).read();
    if (!status.owners && !status.masters && !status.inbox && !status.failover) {
      throw new NoHoldfastTablesError(prefix, await holdfastPrefixes(dataSource));
    }
    return status;
  });
}
