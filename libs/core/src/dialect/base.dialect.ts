import type { SqliteAffinity } from './sqlite-affinity';
import { ColumnType, SqlDialect, UpsertSpec } from './sql-dialect';
import { Dialect } from './dialect';
import type { TimestampSql, TimestampStorage } from './timestamp-sql';

/** The column types by their SQL-standard names; `varchar` and `char` take their length in parentheses. */
const STANDARD_COLUMN_TYPES: Readonly<Record<ColumnType['kind'], string>> = {
  varchar: 'VARCHAR',
  char: 'CHAR',
  text: 'TEXT',
  blob: 'BLOB',
  bigint: 'BIGINT',
  int: 'INTEGER',
  timestamp: 'TIMESTAMP(3) WITH TIME ZONE',
};

/** Shared pieces; each concrete dialect overrides what differs. */
export abstract class BaseDialect implements SqlDialect {
  abstract readonly name: Dialect;
  abstract readonly nowMillis: string;
  abstract readonly supportsSkipLocked: boolean;
  readonly singleConnection: boolean = false;

  placeholder(_index: number): string {
    return '?';
  }

  placeholders(count: number, from = 1): string {
    return Array.from({ length: count }, (_, i) => this.placeholder(from + i)).join(', ');
  }

  /** `(p1, p2), (p3, p4)` for `rows` rows of `width` columns. */
  protected valueRows(width: number, rows: number): string {
    return Array.from({ length: rows }, (_, r) => `(${this.placeholders(width, r * width + 1)})`).join(', ');
  }

  protected updatable(spec: UpsertSpec): string[] {
    return spec.columns.filter((c) => !spec.keys.includes(c));
  }

  abstract upsert(spec: UpsertSpec): string;

  /** `INSERT ... ON CONFLICT (keys) DO UPDATE` (PostgreSQL, SQLite): `excluded` names the proposed row. */
  protected onConflictUpsert(spec: UpsertSpec, excluded: string): string {
    const updatable = this.updatable(spec);
    return (
      `INSERT INTO ${spec.table} (${spec.columns.join(', ')}) VALUES ${this.valueRows(spec.columns.length, spec.rows ?? 1)} ` +
      (updatable.length
        ? this.onConflictUpdate(spec.keys, updatable, excluded)
        : `ON CONFLICT (${spec.keys.join(', ')}) DO NOTHING`)
    );
  }

  /** `ON CONFLICT (keys) DO UPDATE SET c = excluded.c, …` (PostgreSQL, SQLite). */
  protected onConflictUpdate(keys: readonly string[], columns: readonly string[], excluded: string): string {
    const updates = columns.map((c) => `${c} = ${excluded}.${c}`);
    return `ON CONFLICT (${keys.join(', ')}) DO UPDATE SET ${updates.join(', ')}`;
  }

  readonly timeline: string | undefined = undefined;
  readonly writableCte: boolean = false;

  keyIn(key: string, subquery: string): string {
    return `${key} IN (${subquery})`;
  }

  abstract timestampSql(storage?: TimestampStorage): TimestampSql;

  forUpdate(skipLocked = false): string {
    return skipLocked ? ' FOR UPDATE SKIP LOCKED' : ' FOR UPDATE';
  }

  limit(select: string, count: number): string {
    return `${select} LIMIT ${Math.trunc(count)}`;
  }

  selectRow(list: string): string {
    return `SELECT ${list}`;
  }

  /** The column types this database names otherwise than {@link STANDARD_COLUMN_TYPES}. */
  protected readonly columnTypeNames: Partial<Record<ColumnType['kind'], string>> = {};

  columnType(type: ColumnType): string {
    const name = this.columnTypeNames[type.kind] ?? STANDARD_COLUMN_TYPES[type.kind];
    return 'length' in type ? `${name}(${type.length})` : name;
  }

  timestampParam(date: Date): unknown {
    return date;
  }

  readTimestamp(value: unknown): Date {
    if (value instanceof Date) return value;
    if (typeof value === 'number') return new Date(value);
    if (typeof value === 'string')
      return new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value.replace(' ', 'T')}Z`);
    throw new TypeError(`Cannot read a timestamp from ${typeof value}`);
  }

  affectedRows(result: unknown): number {
    const affected = (result as { affected?: number } | undefined)?.affected;
    return typeof affected === 'number' ? affected : 0;
  }

  supportsIfNotExists(_object: 'table' | 'index'): boolean {
    return false;
  }

  tableStorage(_fillFactor: number | undefined): string {
    return '';
  }

  columnAffinities(_kind: ColumnType['kind']): readonly SqliteAffinity[] | undefined {
    return undefined;
  }

  readonly errorAbortsTransaction: boolean = false;
  readonly boundsWaits: boolean = false;

  /** Undefined: TypeORM's `startTransaction` (the dialects Holdfast does not execute). */
  beginTransaction(_idleMs: number, _level?: string): string[] | undefined {
    return undefined;
  }

  endTransaction(_outcome: 'commit' | 'rollback'): string | undefined {
    return undefined;
  }

  sessionReset(_idleMs: number): string | undefined {
    return undefined;
  }

  /** mysql2's options, which every driver but pg was given. */
  poolSizeOptions(size: number): Record<string, number> {
    return { connectionLimit: size, maxIdle: size };
  }
}

/** Formats a Date as `YYYY-MM-DD HH:MM:SS.mmm` in UTC. */
export function utcDateTime(date: Date): string {
  return date.toISOString().replace('T', ' ').replace('Z', '');
}
