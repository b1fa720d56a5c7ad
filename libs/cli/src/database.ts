import { sqlClientFor, type SqlClient } from '@holdfast/core/kit';
import { DataSource } from 'typeorm';
import { dataSourceOptionsFromUrl } from './database-url';

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
  const dataSource = await new DataSource(dataSourceOptionsFromUrl(url, { readOnly })).initialize();
  try {
    return await work(sqlClientFor(dataSource), dataSource);
  } finally {
    await dataSource.destroy();
  }
}
