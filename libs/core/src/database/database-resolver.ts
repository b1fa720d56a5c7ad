import { Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { Dialect, isDialect } from '../dialect/dialect';
import { dialectOfDriver } from '../dialect/dialects';
import { DialectNotExecutedError, UnsupportedDialectError } from '../errors/holdfast.error';

/** The dialects Holdfast generates SQL for but never runs (no such server is tested). */
const NOT_EXECUTED: readonly Dialect[] = ['mssql', 'oracle'];

/**
 * Detects the SQL dialect of a DataSource once, from its driver type and the server version
 * string (a `mysql` DataSource talking to MariaDB is MariaDB). Replaceable: provide your own
 * class under this token to teach Holdfast about another driver. SQL Server and Oracle are
 * refused (DialectNotExecutedError): Holdfast only generates their SQL.
 */
@Injectable()
export class DatabaseResolver {
  resolve(dataSource: DataSource, override?: Dialect): Dialect {
    if (override !== undefined) {
      if (!isDialect(override)) throw new UnsupportedDialectError(override, 'from the dialect option');
      if (NOT_EXECUTED.includes(override))
        throw new DialectNotExecutedError(override, 'from the dialect option');
      return override;
    }
    const type = String(dataSource.options.type);
    const dialect = dialectOfDriver(type, this.serverVersion(dataSource));
    if (!dialect) throw new UnsupportedDialectError(type, 'from the DataSource driver type');
    if (NOT_EXECUTED.includes(dialect)) {
      throw new DialectNotExecutedError(dialect, `from the DataSource driver type '${type}'`);
    }
    return dialect;
  }

  /** The server version string the driver read after connecting ('' when unknown). */
  serverVersion(dataSource: DataSource): string {
    return String((dataSource.driver as { version?: string }).version ?? '');
  }
}
