import { UnsupportedDialectError } from '../errors/holdfast.error';
import { Dialect, isDialect } from './dialect';
import { MssqlDialect } from './mssql.dialect';
import { MysqlDialect } from './mysql.dialect';
import { OracleDialect } from './oracle.dialect';
import { PostgresDialect } from './postgres.dialect';
import { SqlDialect } from './sql-dialect';
import { SqliteDialect } from './sqlite.dialect';

export interface SqlDialectOptions {
  /** mysql2's `timezone` option of the DataSource (MySQL/MariaDB only). */
  driverTimezone?: string;
}

/** The SQL pieces for a dialect name. */
export function sqlDialect(name: Dialect, options: SqlDialectOptions = {}): SqlDialect {
  if (!isDialect(name)) throw new UnsupportedDialectError(name);
  switch (name) {
    case 'postgres':
      return new PostgresDialect();
    case 'mysql':
    case 'mariadb':
      return new MysqlDialect(name, options.driverTimezone ?? 'Z');
    case 'sqlite':
      return new SqliteDialect();
    case 'mssql':
      return new MssqlDialect();
    case 'oracle':
      return new OracleDialect();
  }
}
