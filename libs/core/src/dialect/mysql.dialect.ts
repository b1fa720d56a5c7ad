import { BaseDialect, utcDateTime } from './base.dialect';
import { MARIADB_TRANSACTIONS } from './mariadb-transactions';
import { UpsertSpec, type CompoundTransactionSql } from './sql-dialect';
import { epochMillis, YEAR_9999_END, type TimestampSql, type TimestampStorage } from './timestamp-sql';

/** A constant instant as a `DATETIME(3)`: UTC wall-clock text. */
const datetimeLiteral = (ms: number) => `CAST('${utcDateTime(new Date(ms))}' AS DATETIME(3))`;

/** `DATETIME(3)` holding UTC wall-clock time, compared with `UTC_TIMESTAMP(3)`. */
const DATETIMES: TimestampSql = {
  now: 'UTC_TIMESTAMP(3)',
  at: (b, ms) => `CAST(${b.bind(utcDateTime(new Date(ms)))} AS DATETIME(3))`,
  nowPlus: (b, delta) => `(UTC_TIMESTAMP(3) + INTERVAL ${b.bind(Math.round(delta) * 1000)} MICROSECOND)`,
  read: (c) => `CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', ${c}) DIV 1000 AS SIGNED)`,
  toMillis: epochMillis,
  literal: datetimeLiteral,
  fromMillis: (e) => `DATE_ADD(CAST('1970-01-01 00:00:00' AS DATETIME(3)), INTERVAL ${e} * 1000 MICROSECOND)`,
  maxMillis: YEAR_9999_END,
};

/**
 * `TIMESTAMP`: the server converts it through the session time zone, so it is written with
 * FROM_UNIXTIME and read with UNIX_TIMESTAMP, which do not depend on it. It ends in January 2038.
 */
const TIMESTAMPS: TimestampSql = {
  now: 'CURRENT_TIMESTAMP(3)',
  at: (b, ms) => `FROM_UNIXTIME(${b.bind(Math.round(ms))} / 1000)`,
  nowPlus: (b, delta) =>
    `FROM_UNIXTIME(UNIX_TIMESTAMP(CURRENT_TIMESTAMP(3)) + ${b.bind(Math.round(delta))} / 1000)`,
  read: (c) => `CAST(FLOOR(UNIX_TIMESTAMP(${c}) * 1000) AS SIGNED)`,
  toMillis: epochMillis,
  // A DATETIME, to compare with: FROM_UNIXTIME cannot reach a time past the TIMESTAMP range.
  literal: datetimeLiteral,
  fromMillis: (e) => `FROM_UNIXTIME(${e} / 1000)`,
  maxMillis: Date.parse('2038-01-19T03:14:07.999Z'),
};

/** `ON DUPLICATE KEY UPDATE c = VALUES(c), …`: the proposed row's `columns`. */
const duplicateKeyUpdate = (columns: readonly string[]) =>
  `ON DUPLICATE KEY UPDATE ${columns.map((c) => `${c} = VALUES(${c})`).join(', ')}`;

/**
 * MySQL 8 and MariaDB 10.6+. DATETIME(3) holds UTC; values are bound as UTC strings so the
 * driver's `timezone` setting cannot shift them, and read back through `readTimestamp`.
 */
export class MysqlDialect extends BaseDialect {
  readonly nowMillis = 'CAST(FLOOR(UNIX_TIMESTAMP(CURRENT_TIMESTAMP(3)) * 1000) AS SIGNED)';
  readonly supportsSkipLocked = true;
  constructor(
    readonly name: 'mysql' | 'mariadb' = 'mysql',
    /** The driver's `timezone` option: how mysql2 turns DATETIME values into Dates. */
    private readonly driverTimezone: string = 'Z',
  ) {
    super();
    this.compoundTransactions = name === 'mariadb' ? MARIADB_TRANSACTIONS : undefined;
  }

  /** MariaDB's (see `SqlDialect.compoundTransactions`). */
  readonly compoundTransactions?: CompoundTransactionSql;

  upsert(spec: UpsertSpec): string {
    const updatable = this.updatable(spec);
    const key = spec.keys[0];
    return (
      `INSERT INTO ${spec.table} (${spec.columns.join(', ')}) VALUES ${this.valueRows(spec.columns.length, spec.rows ?? 1)} ` +
      (updatable.length ? duplicateKeyUpdate(updatable) : `ON DUPLICATE KEY UPDATE ${key} = ${key}`)
    );
  }

  timestampSql(storage: TimestampStorage = 'datetime'): TimestampSql {
    return storage === 'timestamp' ? TIMESTAMPS : DATETIMES;
  }

  /** MySQL has no `CREATE INDEX IF NOT EXISTS`; MariaDB has both. */
  override supportsIfNotExists(object: 'table' | 'index'): boolean {
    return this.name === 'mariadb' || object === 'table';
  }

  override readonly boundsWaits = true;

  /**
   * MariaDB: the session's `idle_transaction_timeout` (seconds), set before the BEGIN and reset
   * with the end, in one compound statement each (see `compoundTransactions`). MySQL has no such
   * variable: the connection's `wait_timeout`, set before the BEGIN and reset after the end
   * (`sessionReset`), for the transaction's duration only. An isolation level with `SET
   * TRANSACTION ISOLATION LEVEL` right before `START TRANSACTION` (that one transaction only).
   */
  override beginTransaction(idleMs: number, level?: string): string[] {
    if (this.compoundTransactions) {
      const opening = this.compoundTransactions.opening(idleMs, level);
      return [this.compoundTransactions.compound(opening)];
    }
    return [
      ...(idleMs > 0 ? [`SET SESSION wait_timeout = ${Math.max(1, Math.ceil(idleMs / 1000))}`] : []),
      // Without SESSION or GLOBAL: the next transaction only, the session keeps its own level.
      ...(level ? [`SET TRANSACTION ISOLATION LEVEL ${level}`] : []),
      'START TRANSACTION',
    ];
  }

  override endTransaction(outcome: 'commit' | 'rollback'): string {
    return outcome.toUpperCase();
  }

  override sessionReset(idleMs: number): string | undefined {
    return !this.compoundTransactions && idleMs > 0 ? 'SET SESSION wait_timeout = DEFAULT' : undefined;
  }

  protected override readonly columnTypeNames = {
    text: 'LONGTEXT',
    blob: 'LONGBLOB',
    int: 'INT',
    timestamp: 'DATETIME(3)',
  };

  override timestampParam(date: Date): unknown {
    return utcDateTime(date);
  }

  override readTimestamp(value: unknown): Date {
    if (!(value instanceof Date)) return super.readTimestamp(value);
    const tz = this.driverTimezone;
    if (tz === 'Z' || tz === '+00:00' || tz === 'utc' || tz === 'UTC') return value;
    // mysql2 built the Date from the stored (UTC) wall-clock fields as if they were in `tz`.
    const wallClock = Date.UTC(
      value.getFullYear(),
      value.getMonth(),
      value.getDate(),
      value.getHours(),
      value.getMinutes(),
      value.getSeconds(),
      value.getMilliseconds(),
    );
    if (tz === 'local') return new Date(wallClock);
    const m = /^([+-])(\d\d):?(\d\d)$/.exec(tz);
    if (!m) return value;
    const offset = (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) * 60_000;
    // mysql2 read the UTC wall clock as if it were at `tz`, i.e. `offset` too early.
    return new Date(value.getTime() + offset);
  }
}
