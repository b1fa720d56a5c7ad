import { BaseDialect } from './base.dialect';
import { sqliteAffinitiesFor, type SqliteAffinity } from './sqlite-affinity';
import { ColumnType, UpsertSpec } from './sql-dialect';
import { epochMillis, YEAR_9999_END, type TimestampSql } from './timestamp-sql';

/** ISO-8601 UTC text with milliseconds, which sorts and compares correctly as text. */
const TIMESTAMPS: TimestampSql = {
  now: "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
  at: (b, ms) => b.bind(new Date(ms).toISOString()),
  nowPlus: (b, delta) =>
    `strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ${b.bind(`+${(Math.round(delta) / 1000).toFixed(3)} seconds`)})`,
  read: (c) => c,
  toMillis: epochMillis,
  literal: (ms) => `'${new Date(ms).toISOString()}'`,
  fromMillis: (e) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${e} / 1000.0, 'unixepoch')`,
  // SQLite parses the ISO text this dialect writes (24 characters ending in Z) faster than
  // JavaScript's Date does; any other text is left to the client, as before.
  millis: (c) =>
    `CASE WHEN substr(${c}, 24) = 'Z' THEN COALESCE(CAST(ROUND(unixepoch(${c}, 'subsec') * 1000) AS INTEGER), ${c}) ELSE ${c} END`,
  maxMillis: YEAR_9999_END,
};

/**
 * SQLite (better-sqlite3). CURRENT_TIMESTAMP has second precision only, so the clock is
 * computed from unixepoch('subsec'). Timestamps are stored as ISO-8601 UTC text with
 * milliseconds, which sorts and compares correctly as text.
 */
export class SqliteDialect extends BaseDialect {
  readonly name = 'sqlite' as const;
  readonly nowMillis = "CAST(unixepoch('subsec') * 1000 AS INTEGER)";
  readonly supportsSkipLocked = false;

  upsert(spec: UpsertSpec): string {
    return this.onConflictUpsert(spec, 'excluded');
  }

  /** SQLite is one file behind one connection. */
  override readonly singleConnection = true;

  timestampSql(): TimestampSql {
    return TIMESTAMPS;
  }

  /** SQLite locks the whole database for writers; a row lock clause does not exist. */
  override forUpdate(): string {
    return '';
  }

  /** ISO-8601 UTC text with milliseconds (see above). */
  protected override readonly columnTypeNames = { timestamp: 'TEXT' };

  override timestampParam(date: Date): unknown {
    return date.toISOString();
  }

  override supportsIfNotExists(): boolean {
    return true;
  }

  /** SQLite decides by affinity what a column holds. */
  override columnAffinities(kind: ColumnType['kind']): readonly SqliteAffinity[] {
    return sqliteAffinitiesFor(kind);
  }

  /** `BEGIN IMMEDIATE`: one process's file lock, taken at once; no server to end anything. */
  override beginTransaction(): string[] {
    return ['BEGIN IMMEDIATE'];
  }

  override endTransaction(outcome: 'commit' | 'rollback'): string {
    return outcome.toUpperCase();
  }
}
