import { BaseDialect, utcDateTime } from './base.dialect';
import { UpsertSpec } from './sql-dialect';
import { epochMillis, YEAR_9999_END, type TimestampSql } from './timestamp-sql';

/**
 * Times are `DATETIME2` columns holding UTC, the type camunda-bpm-correlate's SQL Server DDL gives
 * (precision 7, 100 ns); the values Holdfast binds are milliseconds, as on every dialect.
 */
const TIMESTAMPS: TimestampSql = {
  now: 'SYSUTCDATETIME()',
  at: (b, ms) => `CAST(${b.bind(utcDateTime(new Date(ms)))} AS DATETIME2(3))`,
  nowPlus: (b, delta) => `DATEADD(millisecond, ${b.bind(Math.round(delta))}, SYSUTCDATETIME())`,
  read: (c) => `DATEDIFF_BIG(millisecond, '1970-01-01', ${c})`,
  toMillis: epochMillis,
  literal: (ms) => `CAST('${utcDateTime(new Date(ms))}' AS DATETIME2(3))`,
  fromMillis: (e) =>
    `DATEADD(millisecond, ${e} % 1000, DATEADD(second, ${e} / 1000, CAST('1970-01-01' AS DATETIME2(3))))`,
  maxMillis: YEAR_9999_END,
};

/** SQL Server: generated and unit-tested, not executed here. TypeORM binds @0, @1, ... */
export class MssqlDialect extends BaseDialect {
  readonly name = 'mssql' as const;
  readonly nowMillis = "DATEDIFF_BIG(millisecond, '1970-01-01', SYSUTCDATETIME())";
  readonly supportsSkipLocked = true;

  override placeholder(index: number): string {
    return `@${index - 1}`;
  }

  upsert(spec: UpsertSpec): string {
    const cols = spec.columns;
    const on = spec.keys.map((k) => `t.${k} = s.${k}`).join(' AND ');
    const updates = this.updatable(spec).map((c) => `t.${c} = s.${c}`);
    return (
      `MERGE INTO ${spec.table} WITH (HOLDLOCK) AS t ` +
      `USING (VALUES ${this.valueRows(cols.length, spec.rows ?? 1)}) AS s (${cols.join(', ')}) ON ${on} ` +
      (updates.length ? `WHEN MATCHED THEN UPDATE SET ${updates.join(', ')} ` : '') +
      `WHEN NOT MATCHED THEN INSERT (${cols.join(', ')}) VALUES (${cols.map((c) => `s.${c}`).join(', ')});`
    );
  }

  timestampSql(): TimestampSql {
    return TIMESTAMPS;
  }

  /** SQL Server has no GREATEST before 2022. */
  /** SQL Server locks with table hints (WITH (UPDLOCK, READPAST)), placed by the caller. */
  override forUpdate(): string {
    return '';
  }

  override limit(select: string, count: number): string {
    return select.replace(/^SELECT\s/i, `SELECT TOP (${Math.trunc(count)}) `);
  }

  protected override readonly columnTypeNames = {
    varchar: 'NVARCHAR',
    char: 'NCHAR',
    text: 'NVARCHAR(MAX)',
    blob: 'VARBINARY(MAX)',
    int: 'INT',
    timestamp: 'DATETIME2',
  };
}
