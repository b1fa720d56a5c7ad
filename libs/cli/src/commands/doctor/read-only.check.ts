import type { SqlClient } from '@holdfast/core/kit';
import { accessSync, constants } from 'node:fs';
import { dirname } from 'node:path';
import type { DataSource } from 'typeorm';
import type { DoctorCheck } from './doctor-report';
import { field, one } from './sql-rows';

const FIX =
  'point DATABASE_URL (and the application) at the writable primary: after a failover the old ' +
  'primary or a replica refuses every lease renewal, claim and acceptance';

/** One setting that makes a server refuse writes: the column that reads it, and what it means when set. */
interface ReadOnlyFlag {
  readonly column: string;
  readonly set: (value: unknown) => boolean;
  readonly detail: string;
}

/** How a server dialect says it refuses writes: one query, its flags in the order they are reported. */
interface ServerReadOnly {
  readonly query: string;
  readonly flags: readonly ReadOnlyFlag[];
}

const MYSQL_READ_ONLY: ServerReadOnly = {
  query: 'SELECT @@global.read_only AS read_only, @@innodb_read_only AS innodb_read_only',
  flags: [
    {
      column: 'innodb_read_only',
      set: (value) => Number(value) === 1,
      detail: 'innodb_read_only is ON: no InnoDB table can be written',
    },
    {
      column: 'read_only',
      set: (value) => Number(value) === 1,
      detail:
        'read_only is ON (a replica, or a primary demoted by the failover tool): only SUPER/READ_ONLY ADMIN may write',
    },
  ],
};

/** Per server dialect: a standby after a failover (PostgreSQL in recovery, MySQL/MariaDB read_only). */
const SERVER_READ_ONLY: Readonly<Record<string, ServerReadOnly>> = {
  postgres: {
    query:
      "SELECT pg_is_in_recovery() AS recovery, current_setting('default_transaction_read_only') AS read_only",
    flags: [
      {
        column: 'recovery',
        set: (value) => value === true,
        detail: 'the server is a standby in recovery (pg_is_in_recovery() is true): it refuses every write',
      },
      {
        column: 'read_only',
        set: (value) => String(value) === 'on',
        detail: 'default_transaction_read_only is on: every transaction is read-only',
      },
    ],
  },
  mysql: MYSQL_READ_ONLY,
  mariadb: MYSQL_READ_ONLY,
};

/**
 * A "primary" that cannot be written: a standby after a failover (PostgreSQL in recovery, MySQL/
 * MariaDB read_only), or a SQLite file this process may not write.
 */
export async function readOnlyCheck(sql: SqlClient, dataSource: DataSource): Promise<DoctorCheck> {
  const name = sql.dialect.name;
  const server = SERVER_READ_ONLY[name];
  if (server) {
    const row = await one(sql, server.query);
    const found = server.flags.find((flag) => flag.set(field(row, flag.column)));
    if (!found) return { check: 'read-only', status: 'ok', detail: 'the server accepts writes' };
    return { check: 'read-only', status: 'failure', detail: found.detail, fix: FIX };
  }
  if (name === 'sqlite') return sqliteWritable(dataSource.options.database as string);
  return { check: 'read-only', status: 'skipped', detail: `not checked on ${name}` };
}

/** A SQLite file this process may not write, or its directory (its journal or WAL lives beside it). */
function sqliteWritable(file: string): DoctorCheck {
  const problems: string[] = [];
  for (const [path, what] of [
    [file, 'the database file'],
    [dirname(file), 'its directory (SQLite writes its journal or WAL beside it)'],
  ] as const) {
    try {
      accessSync(path, constants.W_OK);
    } catch {
      problems.push(`${what} ${path} is not writable by this user`);
    }
  }
  if (!problems.length)
    return { check: 'read-only', status: 'ok', detail: 'the file and its directory are writable' };
  return {
    check: 'read-only',
    status: 'failure',
    detail: problems.join('; '),
    fix: 'run the application as a user that may write the file and its directory, on a writable mount',
  };
}
