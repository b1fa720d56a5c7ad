import { StatementBinder, toNumber, type SqlDialect, type Statement } from '@holdfast/core/kit';

/** The live entries of one failover in the store's table, as an operator reads them. */
export interface FailoverStatus {
  failover: string;
  /** Entries not expired at `now`. */
  liveEntries: number;
  /** The newest entry's AS_OF (ISO-8601), null when there is none. */
  newestAsOf: string | null;
}

/** The statement that counts the live entries of each failover in `table` at `now` (epoch ms). */
export function selectFailoverStatus(dialect: SqlDialect, table: string, now: number): Statement {
  const b = new StatementBinder(dialect);
  return b.statement(
    `SELECT FAILOVER_NAME AS failover_name, COUNT(*) AS live, MAX(AS_OF) AS newest FROM ${table} ` +
      `WHERE EXPIRE_ON >= ${b.bind(dialect.timestampParam(new Date(now)))} GROUP BY FAILOVER_NAME ORDER BY FAILOVER_NAME`,
  );
}

/** One row of `selectFailoverStatus`. */
export function toFailoverStatus(row: Record<string, unknown>, dialect: SqlDialect): FailoverStatus {
  return {
    failover: String(row.failover_name),
    liveEntries: toNumber(row.live),
    newestAsOf:
      row.newest === null || row.newest === undefined
        ? null
        : dialect.readTimestamp(row.newest).toISOString(),
  };
}
