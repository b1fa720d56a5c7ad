import { Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { Dialect, isDialect } from '../dialect/dialect';
import { UnsupportedDialectError } from '../errors/holdfast.error';

const BY_DRIVER_TYPE: Record<string, Dialect> = {
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
 * Detects the SQL dialect of a DataSource once, from its driver type and the server version
 * string (a `mysql` DataSource talking to MariaDB is MariaDB). Replaceable: provide your own
 * class under this token to teach Holdfast about another driver.
 */
@Injectable()
export class DatabaseResolver {
  resolve(dataSource: DataSource, override?: Dialect): Dialect {
    if (override !== undefined) {
      if (!isDialect(override)) throw new UnsupportedDialectError(override, 'from the dialect option');
      return override;
    }
    const type = String(dataSource.options.type);
    const dialect = BY_DRIVER_TYPE[type];
    if (!dialect) throw new UnsupportedDialectError(type, 'from the DataSource driver type');
    if (dialect === 'mysql' && /mariadb/i.test(this.serverVersion(dataSource))) return 'mariadb';
    return dialect;
  }

  /** The server version string the driver read after connecting ('' when unknown). */
  serverVersion(dataSource: DataSource): string {
    return String((dataSource.driver as { version?: string }).version ?? '');
  }
}
