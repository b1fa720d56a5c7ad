/** Logical column types; each dialect maps them to DDL. */
export type ColumnType =
  | { kind: 'varchar'; length: number }
  /** Fixed width, blank-padded (Simba's `owner_id CHAR(32)`). */
  | { kind: 'char'; length: number }
  | { kind: 'text' }
  | { kind: 'blob' }
  | { kind: 'bigint' }
  | { kind: 'int' }
  | { kind: 'timestamp' };
