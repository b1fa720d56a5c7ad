import stringify from 'safe-stable-stringify';

/** Layer 1 of a failover key: turns the method's arguments into a raw key. */
export interface KeyGenerator {
  key(args: readonly unknown[]): string;
}

/**
 * No arguments: `NO-ARG`. Strings, numbers, booleans: their text. Arrays: elements joined
 * with `,`. Several arguments: joined with `:`. Objects: their own `toString()` when the class
 * defines one, else stable JSON with sorted keys — never an identity hash, so equal arguments
 * give equal keys across processes and restarts.
 */
export class DefaultKeyGenerator implements KeyGenerator {
  key(args: readonly unknown[]): string {
    if (args.length === 0) return 'NO-ARG';
    return args.map((arg) => this.part(arg)).join(':');
  }

  protected part(value: unknown): string {
    if (value === null || value === undefined) return 'null';
    switch (typeof value) {
      case 'string':
        return value;
      case 'number':
      case 'boolean':
      case 'bigint':
        return String(value);
    }
    if (value instanceof Date) return value.toISOString();
    if (Array.isArray(value)) return value.map((v) => this.part(v)).join(',');
    if (typeof value === 'object' && value.toString !== Object.prototype.toString) return String(value);
    return stringify(value) ?? 'null';
  }
}
