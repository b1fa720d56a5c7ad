import { sqlClientFor, type SqlClient } from '@holdfast/core/kit';
import { DataSource } from 'typeorm';
import { dataSourceOptionsFromUrl, redact } from './database-url';
import { DatabaseUnreachableError } from './errors';

/**
 * Opens DATABASE_URL for one command and closes it after `work`. `readOnly`: the command only
 * reads, so it must create nothing (an SQLite file that does not exist is an error, not a new
 * empty database).
 */
export async function withDatabase<T>(
  url: string | undefined,
  readOnly: boolean,
  work: (sql: SqlClient, dataSource: DataSource) => Promise<T>,
): Promise<T> {
  const options = dataSourceOptionsFromUrl(url, { readOnly });
  let dataSource: DataSource;
  try {
    dataSource = await new DataSource(options).initialize();
  } catch (error) {
    // The driver's own words (ECONNREFUSED, an unknown database, a bad password), with the URL
    // they are about, its password hidden.
    throw new DatabaseUnreachableError(redact(url!), error);
  }
  try {
    return await work(sqlClientFor(dataSource), dataSource);
  } finally {
    await dataSource.destroy();
  }
}
