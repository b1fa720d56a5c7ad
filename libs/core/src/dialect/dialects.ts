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

/** The dialect of each TypeORM driver type Holdfast knows. */
const BY_DRIVER_TYPE: Readonly<Record<string, Dialect>> = {
  postgres: 'postgres',
  'aurora-postgres': 'postgres',
  cockroachdb: 'postgres',
  mysql: 'mysql',
  'aurora-mysql': 'mysql',
  mariadb: 'mariadb',
  'better-sqlite3': 'sqlite',
  sqlite: 'sqlite',
  capacitor: 'sqlite',
  mssql: 'mssql',
  oracle: 'oracle',
};

/**
 * The dialect of a TypeORM driver type (`DataSourceOptions.type`), undefined for a type Holdfast
 * does not know; `serverVersion`, when known, tells MariaDB behind a `mysql` driver.
 */
export function dialectOfDriver(type: string, serverVersion = ''): Dialect | undefined {
  const dialect = BY_DRIVER_TYPE[type];
  if (dialect === 'mysql' && /mariadb/i.test(serverVersion)) return 'mariadb';
  return dialect;
}

/** `dialect` itself, or the SQL pieces for a dialect name (for functions that take either). */
export function asSqlDialect(dialect: Dialect | SqlDialect): SqlDialect {
  return typeof dialect === 'string' ? sqlDialect(dialect) : dialect;
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
