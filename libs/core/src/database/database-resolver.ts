import { Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { Dialect, isDialect } from '../dialect/dialect';
import { dialectOfDriver } from '../dialect/dialects';
import { UnsupportedDialectError } from '../errors/holdfast.error';

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
    if (!dialectOfDriver(type)) throw new UnsupportedDialectError(type, 'from the DataSource driver type');
    return dialectOfDriver(type, this.serverVersion(dataSource))!;
  }

  /** The server version string the driver read after connecting ('' when unknown). */
  serverVersion(dataSource: DataSource): string {
    return String((dataSource.driver as { version?: string }).version ?? '');
  }
}
