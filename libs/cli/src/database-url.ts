import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { DataSourceOptions } from 'typeorm';
import { InvalidDatabaseUrlError } from './errors';

const FORMS = 'postgres://…, postgresql://…, mysql://…, mariadb://… or sqlite:<file>';

/**
 * TypeORM options for DATABASE_URL: `postgres://` / `postgresql://` (pg), `mysql://` (mysql2,
 * MySQL), `mariadb://` (mysql2, MariaDB), `sqlite:<file>` (better-sqlite3; `sqlite:///abs/path`
 * works too). The driver is the application's own: install the one for your database.
 * `readOnly`: the SQLite file must exist and is opened read-only (commands that only read).
 */
export function dataSourceOptionsFromUrl(
  url: string | undefined,
  { readOnly = false }: { readOnly?: boolean } = {},
): DataSourceOptions {
  if (!url) throw new InvalidDatabaseUrlError(`DATABASE_URL is not set; set it to ${FORMS}`);
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  switch (scheme) {
    case 'postgres':
    case 'postgresql':
      return { type: 'postgres', url };
    case 'mysql':
    case 'mariadb':
      return { type: scheme, url: url.replace(/^mariadb:/i, 'mysql:'), timezone: 'Z' };
    case 'sqlite': {
      const file = url.slice('sqlite:'.length).replace(/^\/\//, '');
      if (!file)
        throw new InvalidDatabaseUrlError(`DATABASE_URL ${JSON.stringify(url)} names no SQLite file`);
      const database = resolve(file);
      // SQLite opens a directory and then fails every statement with "disk I/O error".
      if (existsSync(database) && statSync(database).isDirectory()) {
        throw new InvalidDatabaseUrlError(
          `DATABASE_URL ${JSON.stringify(url)}: ${database} is a directory, not a SQLite database file ` +
            `(name the file, e.g. sqlite:${join(file, 'app.sqlite')})`,
        );
      }
      if (readOnly) {
        // A read-only command creates nothing: TypeORM would make the directory and the driver an
        // empty database (a mistyped path then reads as "no table"), and WAL would change the file.
        if (!existsSync(database)) {
          throw new InvalidDatabaseUrlError(
            `DATABASE_URL ${JSON.stringify(url)}: there is no SQLite database at ${database}`,
          );
        }
        return { type: 'better-sqlite3', database, readonly: true, fileMustExist: true, timeout: 10_000 };
      }
      return { type: 'better-sqlite3', database, enableWAL: true, timeout: 10_000 };
    }
    default:
      throw new InvalidDatabaseUrlError(
        `DATABASE_URL must start with ${FORMS}; got ${JSON.stringify(redact(url))}`,
      );
  }
}

/** The URL with its password hidden, for messages. */
export function redact(url: string): string {
  return url.replace(/^([^:/]+:\/\/[^:@/]+:)[^@/]*@/, '$1***@');
}
