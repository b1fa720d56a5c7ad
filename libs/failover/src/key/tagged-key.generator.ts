import { FailoverKeyError, KeyEncodingError } from '../errors';
import type { FailoverKeyContext, KeyGenerator } from './key-generator';

const ISO_DATE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function ownMethod(value: object, name: 'toString' | 'toJSON'): boolean {
  const fn = (value as Record<string, unknown>)[name];
  return (
    typeof fn === 'function' && fn !== Object.prototype.toString && fn !== Object.prototype.toLocaleString
  );
}

function bytesOf(value: ArrayBuffer | ArrayBufferView): { type: string; base64: string } {
  if (ArrayBuffer.isView(value)) {
    return {
      type: value.constructor.name,
      base64: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64'),
    };
  }
  return { type: value.constructor.name, base64: Buffer.from(value).toString('base64') };
}

/**
 * The shared machinery of both generators: no arguments `NO-ARG`, arguments joined with `:`,
 * lists with `,`, and the tagged canonical JSON (see DefaultKeyGenerator) for the values Java
 * cannot express. What differs is how strings, `null` and nested lists are written.
 */
export abstract class TaggedKeyGenerator implements KeyGenerator {
  key(args: readonly unknown[], context?: FailoverKeyContext): string {
    if (args.length === 0) return 'NO-ARG';
    if (args.length === 1) return this.guarded(args[0], 0, context);
    let key = '';
    for (let i = 0; i < args.length; i++) key += (i ? ':' : '') + this.guarded(args[i], i, context);
    return key;
  }

  /** How a string, or the `toString()` text of a value object, is written. */
  protected abstract text(value: string): string;
  /** How `null` and `undefined` are written as an argument or a list element. */
  protected abstract readonly absent: string;
  /** A list inside a list: flattened (Java) or written as JSON (injective). */
  protected abstract nestedList(list: readonly unknown[], path: string, open: readonly object[]): string;

  private guarded(value: unknown, position: number, context?: FailoverKeyContext): string {
    // Fast path: the Java-expressible scalars most methods take.
    if (typeof value === 'string') return this.text(value);
    try {
      return this.part(value);
    } catch (error) {
      if (!(error instanceof KeyEncodingError)) throw error;
      throw new FailoverKeyError(context?.name, position, error.path, error.reason);
    }
  }

  /** One argument (or one element of a list argument). */
  protected part(value: unknown, path = '', open: readonly object[] = []): string {
    if (value === null || value === undefined) return this.absent;
    switch (typeof value) {
      case 'string':
        return this.text(value);
      case 'number':
      case 'boolean':
      case 'bigint':
        return String(value);
      case 'function':
        throw new KeyEncodingError(path, 'a function has no value to key');
      case 'symbol':
        throw new KeyEncodingError(path, 'a symbol has no value to key');
    }
    const object = value as object;
    if (Array.isArray(object)) {
      if (open.includes(object)) throw new KeyEncodingError(path, 'the value contains a cycle');
      return open.length === 0 ? this.list(object, path, [object]) : this.nestedList(object, path, open);
    }
    if (object instanceof Date && !Number.isNaN(object.getTime())) {
      const iso = object.toISOString();
      if (ISO_DATE.test(iso)) return iso;
    }
    const bytes = ArrayBuffer.isView(object) || object instanceof ArrayBuffer;
    if (!bytes && !(object instanceof Date) && !isPlainObject(object) && ownMethod(object, 'toString'))
      return this.text(String(object));
    return this.json(object, path);
  }

  /** A list's elements joined with `,`; `open` holds the lists being written (cycles). */
  protected list(list: readonly unknown[], path: string, open: readonly object[]): string {
    let key = '';
    for (let i = 0; i < list.length; i++) key += (i ? ',' : '') + this.part(list[i], `${path}[${i}]`, open);
    return key;
  }

  /** Tagged canonical JSON of a value Java cannot express. */
  protected json(value: object, path: string): string {
    return JSON.stringify(this.canonical(value, new Set(), path));
  }

  /** A JSON tree for any keyable value (see the class comment for the tags). */
  protected canonical(value: unknown, seen: Set<object>, path: string): unknown {
    if (value === null || value === undefined) return null;
    switch (typeof value) {
      case 'string':
      case 'boolean':
        return value;
      case 'number':
        return Number.isFinite(value) ? (Object.is(value, -0) ? 0 : value) : { $number: String(value) };
      case 'bigint':
        return { $bigint: value.toString() };
      case 'function':
        throw new KeyEncodingError(path, 'a function has no value to key');
      case 'symbol':
        throw new KeyEncodingError(path, 'a symbol has no value to key');
    }
    const object = value as object;
    if (seen.has(object)) throw new KeyEncodingError(path, 'the value contains a cycle');
    seen.add(object);
    try {
      return this.canonicalObject(object, seen, path);
    } finally {
      seen.delete(object);
    }
  }

  private canonicalObject(object: object, seen: Set<object>, path: string): unknown {
    if (Array.isArray(object)) return object.map((v, i) => this.canonical(v, seen, `${path}[${i}]`));
    if (object instanceof Date)
      return { $date: Number.isNaN(object.getTime()) ? 'Invalid Date' : object.toISOString() };
    if (ArrayBuffer.isView(object) || object instanceof ArrayBuffer) {
      const { type, base64 } = bytesOf(object);
      return { $bytes: base64, $type: type };
    }
    if (object instanceof Set) {
      const elements = [...object].map((v) => this.canonical(v, seen, `${path}{set}`));
      return { $set: sortByJson(elements) };
    }
    if (object instanceof Map) {
      const entries = [...object].map(([k, v]) => [
        this.canonical(k, seen, `${path}{map key}`),
        this.canonical(v, seen, `${path}{map value}`),
      ]);
      return { $map: sortByJson(entries, (e) => (e as unknown[])[0]) };
    }
    if (object instanceof WeakMap || object instanceof WeakSet || object instanceof Promise)
      throw new KeyEncodingError(path, `a ${object.constructor.name} has no observable value to key`);
    if (isPlainObject(object)) return this.fields(object, seen, path);
    const name = object.constructor?.name || 'anonymous class';
    if (ownMethod(object, 'toJSON')) {
      const json = (object as { toJSON(): unknown }).toJSON();
      return { $class: name, $json: this.canonical(json, seen, path) };
    }
    if (ownMethod(object, 'toString')) return { $class: name, $text: String(object) };
    const fields = this.fields(object, seen, path);
    if (Object.keys(fields).length === 0)
      throw new KeyEncodingError(
        path,
        `an instance of ${name} has no own enumerable fields (only private fields or getters?), so distinct ` +
          `values would share one key: give ${name} a toJSON() or toString(), or use a keyGenerator`,
      );
    return { $class: name, $fields: fields };
  }

  private fields(object: object, seen: Set<object>, path: string): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(object).sort()) {
      const v = (object as Record<string, unknown>)[key];
      if (v === undefined) continue;
      out[key.startsWith('$') ? `$${key}` : key] = this.canonical(v, seen, `${path}.${key}`);
    }
    return out;
  }
}

function sortByJson<T>(items: T[], by: (item: T) => unknown = (item) => item): T[] {
  return items
    .map((item) => ({ item, json: JSON.stringify(by(item)) }))
    .sort((a, b) => (a.json < b.json ? -1 : a.json > b.json ? 1 : 0))
    .map((e) => e.item);
}
