import { InvalidTablePrefixError } from '../errors/holdfast.error';

const TABLE_PREFIX = /^([A-Za-z0-9_]+\.)*[A-Za-z0-9_]*$/;

/** True for a prefix that can be placed in SQL as-is (SPEC section 2). */
export function isValidTablePrefix(value: unknown): value is string {
  return typeof value === 'string' && TABLE_PREFIX.test(value);
}

/** Throws InvalidTablePrefixError, quoting the value, unless the prefix is safe. */
export function validateTablePrefix(value: unknown): string {
  if (!isValidTablePrefix(value)) throw new InvalidTablePrefixError(value);
  return value;
}

/** `<prefix><TABLE>`, validated. */
export function tableName(prefix: string | undefined, table: string): string {
  return `${validateTablePrefix(prefix ?? '')}${table}`;
}
