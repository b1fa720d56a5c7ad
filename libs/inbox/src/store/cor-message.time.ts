import { utcDateTime, type Dialect } from '@holdfast/core';
import type { Binder } from './binder';

/**
 * How COR_MESSAGE's time columns (INSERTED, EXPIRATION, NEXT_RETRY) are written, compared and
 * read on each database. They are the seed's timestamp types (camunda-bpm-correlate's DDL),
 * never numbers, and every comparison uses the database clock inside the statement.
 *
 * - `now`: the database clock as a value of the column's type.
 * - `at(ms)`: an absolute time (epoch ms) as a bound value of the column's type.
 * - `nowPlus(ms)`: the database clock plus a bound number of milliseconds.
 * - `read(column)`: a select expression whose value `toMillis` turns into epoch ms.
 *
 * MySQL/MariaDB come in two forms: `DATETIME(3)` holds UTC wall-clock time (compared with
 * `UTC_TIMESTAMP(3)`); `TIMESTAMP` is converted by the server through the session time zone, so
 * it is written with FROM_UNIXTIME and read with UNIX_TIMESTAMP, which do not depend on it.
 * A `TIMESTAMP` ends in January 2038, so it cannot hold the seed's FAR_FUTURE (a pause).
 */
export interface TimeSql {
  readonly now: string;
  at(b: Binder, ms: number): string;
  nowPlus(b: Binder, deltaMs: number): string;
  read(column: string): string;
  toMillis(value: unknown): number;
  /** FAR_FUTURE as an SQL literal to compare with (a constant, never a parameter). */
  readonly farFuture: string;
  /** false where the column type cannot hold FAR_FUTURE (MySQL/MariaDB TIMESTAMP). */
  readonly holdsFarFuture: boolean;
}

/** camunda-bpm-correlate's `MessageEntity.FAR_FUTURE`: NEXT_RETRY of a paused message. */
export const FAR_FUTURE = Date.parse('4999-12-03T10:15:30Z');

/** The live type of the time columns on MySQL/MariaDB (`datetime` or `timestamp`). */
export type MysqlTimeKind = 'datetime' | 'timestamp';

const fromDate = (value: unknown): number => {
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string') {
    // Numbers come back as strings from some drivers (epoch ms); texts are ISO-8601 (SQLite).
    if (/^-?\d+(\.\d+)?$/.test(value)) return Math.floor(Number(value));
    return Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value.replace(' ', 'T')}Z`);
  }
  return NaN;
};

/**
 * statement_timestamp(), not now() (frozen for a whole transaction) nor clock_timestamp()
 * (volatile: PostgreSQL cannot compare an index with it, so every due/expiry condition would
 * scan the table). Cut to the millisecond, so a seed table's microsecond column holds what a
 * Holdfast one holds.
 */
const PG_NOW = "date_trunc('milliseconds', statement_timestamp())";

const postgres: TimeSql = {
  now: PG_NOW,
  at: (b, ms) => `CAST(${b.bind(new Date(ms).toISOString())} AS TIMESTAMPTZ)`,
  nowPlus: (b, delta) =>
    `(${PG_NOW} + CAST(${b.bind(Math.round(delta))} AS DOUBLE PRECISION) * INTERVAL '1 millisecond')`,
  read: (c) => `CAST(FLOOR(EXTRACT(EPOCH FROM ${c}) * 1000) AS BIGINT)`,
  toMillis: fromDate,
  farFuture: "CAST('4999-12-03T10:15:30Z' AS TIMESTAMPTZ)",
  holdsFarFuture: true,
};

const MYSQL_FAR_FUTURE = "CAST('4999-12-03 10:15:30.000' AS DATETIME(3))";

const mysqlDatetime: TimeSql = {
  now: 'UTC_TIMESTAMP(3)',
  at: (b, ms) => `CAST(${b.bind(utcDateTime(new Date(ms)))} AS DATETIME(3))`,
  nowPlus: (b, delta) => `(UTC_TIMESTAMP(3) + INTERVAL ${b.bind(Math.round(delta) * 1000)} MICROSECOND)`,
  read: (c) => `CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', ${c}) DIV 1000 AS SIGNED)`,
  toMillis: fromDate,
  farFuture: MYSQL_FAR_FUTURE,
  holdsFarFuture: true,
};

const mysqlTimestamp: TimeSql = {
  now: 'CURRENT_TIMESTAMP(3)',
  at: (b, ms) => `FROM_UNIXTIME(${b.bind(Math.round(ms))} / 1000)`,
  nowPlus: (b, delta) =>
    `FROM_UNIXTIME(UNIX_TIMESTAMP(CURRENT_TIMESTAMP(3)) + ${b.bind(Math.round(delta))} / 1000)`,
  read: (c) => `CAST(FLOOR(UNIX_TIMESTAMP(${c}) * 1000) AS SIGNED)`,
  toMillis: fromDate,
  // Compared as a DATETIME: every TIMESTAMP is below it. FROM_UNIXTIME cannot reach year 4999.
  farFuture: MYSQL_FAR_FUTURE,
  holdsFarFuture: false,
};

/** SQLite: ISO-8601 UTC text with milliseconds, which sorts and compares correctly as text. */
const sqlite: TimeSql = {
  now: "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
  at: (b, ms) => b.bind(new Date(ms).toISOString()),
  nowPlus: (b, delta) =>
    `strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ${b.bind(`+${(Math.round(delta) / 1000).toFixed(3)} seconds`)})`,
  read: (c) => c,
  toMillis: fromDate,
  farFuture: "'4999-12-03T10:15:30.000Z'",
  holdsFarFuture: true,
};

/** Generated and unit-tested only (DATETIME2 holds UTC, as the seed's SQL Server DDL has it). */
const mssql: TimeSql = {
  now: 'SYSUTCDATETIME()',
  at: (b, ms) => `CAST(${b.bind(utcDateTime(new Date(ms)))} AS DATETIME2(3))`,
  nowPlus: (b, delta) => `DATEADD(millisecond, ${b.bind(Math.round(delta))}, SYSUTCDATETIME())`,
  read: (c) => `DATEDIFF_BIG(millisecond, '1970-01-01', ${c})`,
  toMillis: fromDate,
  farFuture: "CAST('4999-12-03 10:15:30.000' AS DATETIME2(3))",
  holdsFarFuture: true,
};

const oracle: TimeSql = {
  now: 'SYS_EXTRACT_UTC(SYSTIMESTAMP)',
  at: (b, ms) => `TO_TIMESTAMP(${b.bind(utcDateTime(new Date(ms)))}, 'YYYY-MM-DD HH24:MI:SS.FF3')`,
  nowPlus: (b, delta) =>
    `(SYS_EXTRACT_UTC(SYSTIMESTAMP) + NUMTODSINTERVAL(${b.bind(Math.round(delta) / 1000)}, 'SECOND'))`,
  read: (c) =>
    `ROUND((CAST(${c} AS DATE) - DATE '1970-01-01') * 86400000 + EXTRACT(SECOND FROM ${c}) * 1000 - TRUNC(EXTRACT(SECOND FROM ${c})) * 1000)`,
  toMillis: fromDate,
  farFuture: "TIMESTAMP '4999-12-03 10:15:30.000'",
  holdsFarFuture: true,
};

/** The time pieces for a dialect (and, on MySQL/MariaDB, the live column type). */
export function timeSql(dialect: Dialect, mysqlKind: MysqlTimeKind = 'datetime'): TimeSql {
  switch (dialect) {
    case 'postgres':
      return postgres;
    case 'mysql':
    case 'mariadb':
      return mysqlKind === 'timestamp' ? mysqlTimestamp : mysqlDatetime;
    case 'sqlite':
      return sqlite;
    case 'mssql':
      return mssql;
    case 'oracle':
      return oracle;
  }
}
