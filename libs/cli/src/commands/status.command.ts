import { validateTablePrefix } from '@holdfast/core/kit';
import type { LockTableOptions } from '@holdfast/locker';
import {
  databaseOf,
  inboxMaxRetries,
  jsonOption,
  lockTableOf,
  lockTableOptions,
  maxRetriesOption,
  output,
  parseOptions,
  prefixOption,
  type CliCommand,
} from '../cli-command';
import { formatStatus } from '../status/status-table';
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
  /** The lock table's name and columns when not Holdfast's own (LockerModule's `lockTableName`, `lockColumns`). */
  lockTable?: Omit<LockTableOptions, 'tablePrefix'>;
}): Promise<HoldfastStatus> {
  const prefix = options.prefix ?? '';
  validateTablePrefix(prefix);
  return withDatabase(options.url, true, async (sql, dataSource) => {
    const status = await new StatusQueries(sql, prefix, options.inboxMaxRetries, options.lockTable).read();
    if (!status.owners && !status.masters && !status.inbox && !status.failover) {
      throw new NoHoldfastTablesError(
        prefix,
        await holdfastPrefixes(dataSource, options.lockTable?.lockTableName),
      );
    }
    return status;
  });
}

export const status: CliCommand = {
  name: 'status',
  usage: `  status [--prefix P] [--max-retries N] [--lock-table NAME [--lock-columns ID,TIME,HOLDER]]
      what the tables on DATABASE_URL say now: mutex owners, masters, inbox counts, live failover
      entries. Read-only. Parked is RETRIES >= your InboxModule's retry.maxRetries: without
      --max-retries (or HOLDFAST_INBOX_MAX_RETRIES) the counts that depend on it show as "?".
      --lock-table, --lock-columns: your LockerModule's lockTableName and lockColumns, if set
      No Holdfast table under the prefix is an error (exit 1) that names the prefixes found
`,
  async run(args, io) {
    const { values } = parseOptions(args, {
      prefix: prefixOption,
      json: jsonOption,
      'max-retries': maxRetriesOption,
      // The option's earlier name, still accepted.
      'inbox-max-retries': maxRetriesOption,
      ...lockTableOptions,
    });
    const report = await statusCommand({
      ...databaseOf(io, values),
      inboxMaxRetries: inboxMaxRetries(io, values),
      lockTable: lockTableOf(values),
    });
    output(io, values.json, report, () => formatStatus(report));
    return 0;
  },
};
