/** Binds a value and returns its placeholder, in the order the placeholders appear in the text. */
export interface SqlBinder {
  bind(value: unknown): string;
}

/**
 * How a timestamp column stores its values where the dialect has two accepted forms: MySQL/MariaDB
 * `DATETIME(3)` (UTC wall-clock time, the default) or `TIMESTAMP` (converted by the server
 * through the session time zone, and ending in January 2038). Other dialects have one form and
 * ignore it. A fact of the live table: the caller reads it from the catalog.
 */
export type TimestampStorage = 'datetime' | 'timestamp';

/**
 * SQL for a timestamp column (`{ kind: 'timestamp' }`) that is written, compared and read
 * against the database clock inside each statement, to the millisecond.
 */
export interface TimestampSql {
  /** The database clock as a value of the column's type. */
  readonly now: string;
  /** An absolute time (epoch ms) as a bound value of the column's type. */
  at(b: SqlBinder, ms: number): string;
  /** The database clock plus a bound number of milliseconds. */
  nowPlus(b: SqlBinder, deltaMs: number): string;
  /** A select expression of the column (or of `now`) whose value `toMillis` turns into epoch ms. */
  read(column: string): string;
  /** A value selected through `read`, in epoch ms. */
  toMillis(value: unknown): number;
  /** An absolute time (epoch ms) as a constant of the column's type, never a parameter. */
  literal(ms: number): string;
  /** An integer SQL expression of epoch ms as a value of the column's type. */
  fromMillis(expression: string): string;
  /**
   * Optional: a select expression of the column in epoch ms (an integer) when the database can
   * compute it more cheaply than the client parses the column; for a value it cannot read, the
   * column's value as it is. Either way `toMillis` (and `SqlDialect.readTimestamp`) reads it.
   */
  millis?(column: string): string;
  /** The latest time (epoch ms) the column can hold. */
  readonly maxMillis: number;
}

/** The end of year 9999, which every timestamp type but MySQL's `TIMESTAMP` reaches. */
export const YEAR_9999_END = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * Epoch ms from a value `TimestampSql.read` selected: a Date, a number (some drivers hand
 * numbers back as strings), or ISO-8601 text (SQLite), UTC when it names no zone.
 */
export function epochMillis(value: unknown): number {
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string') {
    if (isIntegerText(value)) return Number(value); // a BIGINT as the driver hands it: the usual case
    if (/^-?\d+(\.\d+)?$/.test(value)) return Math.floor(Number(value));
    return Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value.replace(' ', 'T')}Z`);
  }
  return NaN;
}

/** Digits only, with an optional leading minus sign. */
function isIntegerText(text: string): boolean {
  const from = text.charCodeAt(0) === 45 ? 1 : 0; // '-'
  if (text.length <= from) return false;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false; // not 0-9
  }
  return true;
}
