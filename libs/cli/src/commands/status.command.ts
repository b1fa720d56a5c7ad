import { sqlClientFor, validateTablePrefix } from '@holdfast/core/kit';
import { DataSource } from 'typeorm';
import { dataSourceOptionsFromUrl } from '../database-url';
import { StatusQueries, type HoldfastStatus } from '../status/status-queries';

/** `holdfast status`: owners, masters, inbox counts and live failover entries on DATABASE_URL. */
export async function statusCommand(options: {
  url: string | undefined;
  prefix?: string;
  inboxMaxRetries?: number;
}): Promise<HoldfastStatus> {
  const prefix = options.prefix ?? '';
  validateTablePrefix(prefix);
  const dataSource = await new DataSource(dataSourceOptionsFromUrl(options.url)).initialize();
  try {
    return await new StatusQueries(sqlClientFor(dataSource), prefix, options.inboxMaxRetries).read();
  } finally {
    await dataSource.destroy();
  }
}
