/** BIGINT and DECIMAL come back as strings from mysql2 and pg: converted here, in one place. */
export function toNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string' && value.trim() !== '') return Number(value);
  if (value === null || value === undefined) return NaN;
  return Number(value);
}
