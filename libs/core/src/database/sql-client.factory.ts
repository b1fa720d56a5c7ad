import type { DataSource } from 'typeorm';
import { Dialect } from '../dialect/dialect';
import { sqlDialect } from '../dialect/dialects';
import { driverTimezone } from './data-source';
import { DatabaseResolver } from './database-resolver';
import { SqlClient, type SqlClientOptions } from './sql-client';

/**
 * A SqlClient for a DataSource: dialect detected by `resolver` unless `override` names it;
 * `options.idleInTransactionTimeout` bounds its transactions on the server (default 30 s).
 */
export function sqlClientFor(
  dataSource: DataSource,
  resolver: DatabaseResolver = new DatabaseResolver(),
  override?: Dialect,
  options: SqlClientOptions = {},
): SqlClient {
  const dialect = resolver.resolve(dataSource, override);
  return new SqlClient(
    dataSource,
    sqlDialect(dialect, { driverTimezone: driverTimezone(dataSource) ?? 'local' }),
    undefined,
    options,
  );
}
