import type { ColumnType } from './column-type';

/** SQLite's type affinity, from the declared type by SQLite's own rules (datatype3.html §3.1). */
export type SqliteAffinity = 'INTEGER' | 'TEXT' | 'BLOB' | 'REAL' | 'NUMERIC';

/** SQLite's affinity rules, in SQLite's order. */
export function sqliteAffinity(declared: string): SqliteAffinity {
  const t = declared.toUpperCase();
  if (t.includes('INT')) return 'INTEGER';
  if (t.includes('CHAR') || t.includes('CLOB') || t.includes('TEXT')) return 'TEXT';
  if (t.includes('BLOB') || t.trim() === '') return 'BLOB';
  if (t.includes('REAL') || t.includes('FLOA') || t.includes('DOUB')) return 'REAL';
  return 'NUMERIC';
}

/** The affinities a SQLite column may have to hold values of a logical type as Holdfast binds them. */
export function sqliteAffinitiesFor(kind: ColumnType['kind']): readonly SqliteAffinity[] {
  switch (kind) {
    case 'int':
    case 'bigint':
      return ['INTEGER'];
    case 'varchar':
    case 'char':
    case 'text':
      return ['TEXT'];
    case 'blob':
      return ['BLOB'];
    case 'timestamp':
      // ISO-8601 text: TEXT keeps it; NUMERIC (a declared TIMESTAMP/DATETIME) keeps text that is no number.
      return ['TEXT', 'NUMERIC'];
  }
}
