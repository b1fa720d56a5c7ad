import { BaseDialect, utcDateTime } from './base.dialect';
import { UpsertSpec } from './sql-dialect';
import { epochMillis, YEAR_9999_END, type TimestampSql } from './timestamp-sql';

/** UTC times (`SYS_EXTRACT_UTC`), written as `YYYY-MM-DD HH24:MI:SS.FF3` text. */
const TIMESTAMPS: TimestampSql = {
  now: 'SYS_EXTRACT_UTC(SYSTIMESTAMP)',
  at: (b, ms) => `TO_TIMESTAMP(${b.bind(utcDateTime(new Date(ms)))}, 'YYYY-MM-DD HH24:MI:SS.FF3')`,
  nowPlus: (b, delta) =>
    `(SYS_EXTRACT_UTC(SYSTIMESTAMP) + NUMTODSINTERVAL(${b.bind(Math.round(delta) / 1000)}, 'SECOND'))`,
  read: (c) =>
    `ROUND((CAST(${c} AS DATE) - DATE '1970-01-01') * 86400000 + EXTRACT(SECOND FROM ${c}) * 1000 - TRUNC(EXTRACT(SECOND FROM ${c})) * 1000)`,
  toMillis: epochMillis,
  literal: (ms) => `TIMESTAMP '${utcDateTime(new Date(ms))}'`,
  fromMillis: (e) => `(TIMESTAMP '1970-01-01 00:00:00' + NUMTODSINTERVAL(${e} / 1000, 'SECOND'))`,
  maxMillis: YEAR_9999_END,
};

/** Oracle: generated and unit-tested, not executed here. TypeORM binds :1, :2, ... */
export class OracleDialect extends BaseDialect {
  readonly name = 'oracle' as const;
  readonly nowMillis =
    "(CAST(SYS_EXTRACT_UTC(SYSTIMESTAMP) AS DATE) - DATE '1970-01-01') * 86400000 " +
    '+ MOD(FLOOR(EXTRACT(SECOND FROM SYSTIMESTAMP) * 1000), 1000)';
  readonly supportsSkipLocked = true;

  override placeholder(index: number): string {
    return `:${index}`;
  }

  /** One MERGE per row group: rows are selected FROM DUAL and joined with UNION ALL. */
  upsert(spec: UpsertSpec): string {
    const cols = spec.columns;
    const rows = spec.rows ?? 1;
    const source = Array.from(
      { length: rows },
      (_, r) =>
        `SELECT ${cols.map((c, i) => `${this.placeholder(r * cols.length + i + 1)} AS ${c}`).join(', ')} FROM DUAL`,
    ).join(' UNION ALL ');
    const on = spec.keys.map((k) => `t.${k} = s.${k}`).join(' AND ');
    const updates = this.updatable(spec).map((c) => `t.${c} = s.${c}`);
    return (
      `MERGE INTO ${spec.table} t USING (${source}) s ON (${on}) ` +
      (updates.length ? `WHEN MATCHED THEN UPDATE SET ${updates.join(', ')} ` : '') +
      `WHEN NOT MATCHED THEN INSERT (${cols.join(', ')}) VALUES (${cols.map((c) => `s.${c}`).join(', ')})`
    );
  }

  timestampSql(): TimestampSql {
    return TIMESTAMPS;
  }

  override selectRow(list: string): string {
    return `SELECT ${list} FROM DUAL`;
  }

  override limit(select: string, count: number): string {
    return `${select} FETCH FIRST ${Math.trunc(count)} ROWS ONLY`;
  }

  protected override readonly columnTypeNames = {
    varchar: 'VARCHAR2',
    text: 'CLOB',
    bigint: 'NUMBER(19)',
    int: 'NUMBER(10)',
  };
}
