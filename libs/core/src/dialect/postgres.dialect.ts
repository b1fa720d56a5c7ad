import { BaseDialect } from './base.dialect';
import { ColumnType, UpsertSpec } from './sql-dialect';
import { epochMillis, YEAR_9999_END, type TimestampSql } from './timestamp-sql';

/**
 * statement_timestamp(), not now() (frozen for a whole transaction) nor clock_timestamp()
 * (volatile: PostgreSQL cannot compare an index with it, so every condition on the clock would
 * scan the table). Cut to the millisecond, so a microsecond column holds what a millisecond one
 * holds.
 */
const NOW = "date_trunc('milliseconds', statement_timestamp())";

/** `TIMESTAMP(3) WITH TIME ZONE`, written from ISO-8601 UTC text. */
const TIMESTAMPS: TimestampSql = {
  now: NOW,
  at: (b, ms) => `CAST(${b.bind(new Date(ms).toISOString())} AS TIMESTAMPTZ)`,
  nowPlus: (b, delta) =>
    `(${NOW} + CAST(${b.bind(Math.round(delta))} AS DOUBLE PRECISION) * INTERVAL '1 millisecond')`,
  read: (c) => `CAST(FLOOR(EXTRACT(EPOCH FROM ${c}) * 1000) AS BIGINT)`,
  toMillis: epochMillis,
  literal: (ms) => `CAST('${new Date(ms).toISOString()}' AS TIMESTAMPTZ)`,
  fromMillis: (e) => `to_timestamp(${e} / 1000.0)`,
  maxMillis: YEAR_9999_END,
};

export class PostgresDialect extends BaseDialect {
  readonly name = 'postgres' as const;
  /** clock_timestamp(), not now(): now() is frozen for the whole transaction. */
  readonly nowMillis = 'CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT)';
  readonly supportsSkipLocked = true;
  /**
   * The first 8 hex digits of the current WAL file's name: readable by any role (unlike
   * `pg_control_checkpoint()`, whose timeline moves only at the first checkpoint after the
   * promotion), and changed at the promotion itself. On a standby the call fails ("recovery is in
   * progress"), as a write beside it would.
   */
  override readonly timeline = `('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint`;

  override placeholder(index: number): string {
    return `$${index}`;
  }

  upsert(spec: UpsertSpec): string {
    return this.onConflictUpsert(spec, 'EXCLUDED');
  }

  override readonly writableCte = true;

  override keyIn(key: string, subquery: string): string {
    return `${key} = ANY(ARRAY(${subquery}))`;
  }

  timestampSql(): TimestampSql {
    return TIMESTAMPS;
  }

  arraySource(columns: ReadonlyArray<{ name: string; type: ColumnType; placeholder: string }>): string {
    const arrays = columns.map(
      (c) => `CAST(${c.placeholder} AS ${this.columnType(c.type).replace(/\(\d+\)/, '')}[])`,
    );
    return `UNNEST(${arrays.join(', ')}) AS u(${columns.map((c) => c.name).join(', ')})`;
  }

  protected override readonly columnTypeNames = { blob: 'BYTEA' };

  override supportsIfNotExists(): boolean {
    return true;
  }

  override tableStorage(fillFactor: number | undefined): string {
    if (fillFactor === undefined || fillFactor === 100) return '';
    if (!Number.isInteger(fillFactor) || fillFactor < 10 || fillFactor > 100) {
      throw new RangeError(`fillFactor must be an integer from 10 to 100, got ${fillFactor}`);
    }
    return ` WITH (fillfactor = ${fillFactor})`;
  }

  override readonly errorAbortsTransaction = true;
  override readonly boundsWaits = true;

  /**
   * `SET LOCAL idle_in_transaction_session_timeout` sent with the BEGIN (one round trip,
   * transaction-scoped, so it works behind PgBouncer in transaction mode).
   */
  override beginTransaction(idleMs: number, level?: string): string[] {
    const begin = level ? `BEGIN ISOLATION LEVEL ${level}` : 'BEGIN';
    return [idleMs > 0 ? `${begin}; SET LOCAL idle_in_transaction_session_timeout = ${idleMs}` : begin];
  }

  override endTransaction(outcome: 'commit' | 'rollback'): string {
    return outcome.toUpperCase();
  }

  override poolSizeOptions(size: number): Record<string, number> {
    return { max: size, min: size };
  }
}
