import { FailoverKeyError } from '../errors';

/** What a key generator knows about the failover it keys: given to every `key()` call. */
export interface FailoverKeyContext {
  /** The failover's name (`@Failover({ name })`). */
  name: string;
  /** Its domain, when it shares entries with other failovers. */
  domain?: string;
  /** The name entries are stored under: `domain ?? name`. */
  effectiveName: string;
  /** `Class.method` the failover is declared on. */
  method: string;
}

/**
 * Layer 1 of a failover key: turns the method's arguments into a raw key. Implement it as a
 * Nest provider (it may inject what it needs) or pass an instance; `context` names the failover.
 */
export interface KeyGenerator {
  key(args: readonly unknown[], context?: FailoverKeyContext): string;
}

const SEPARATORS = /[\\:,]/g;
const NEEDS_ESCAPE = /[\\:,]/;
/** A string that would otherwise read as the start of an ISO date (`2026-01-02T03` + `:`...). */
const DATE_PREFIX = /^\d{4}-\d\d-\d\dT\d\d$/;
const ISO_DATE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

class KeyEncodingError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(reason);
  }
}

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
 * The default layer 1: byte-identical to the Java library for what Java can express, and
 * injective for everything else.
 *
 * - No arguments: `NO-ARG`. Arguments joined with `:`.
 * - Strings as they are; numbers, bigints and booleans as their text; `null`/`undefined` as
 *   `null`; a list as its elements joined with `,` — exactly Java's key for these values.
 * - Only what Java would make ambiguous is escaped: `\`, `:` and `,` inside a string become
 *   `\\`, `\:`, `\,`; a string starting with `{` or `[` gets a leading `\`, and so does a
 *   string that reads like the start of an ISO date. `('a:b')` and `('a', 'b')` therefore get
 *   different keys (Java gives both `a:b`).
 * - A Date: its ISO text. An object whose class defines `toString()` (a `URL`, a value object):
 *   that text, escaped like a string.
 * - Everything else is written as canonical JSON (keys sorted), where values JSON cannot hold
 *   are tagged objects: a Set `{"$set":[...]}` (elements sorted), a Map `{"$map":[[k,v],...]}`
 *   (entries sorted by key), a nested Date `{"$date":iso}`, a BigInt `{"$bigint":"12"}`,
 *   `NaN`/`±Infinity` `{"$number":"NaN"}`, bytes (Buffer, typed arrays, ArrayBuffer)
 *   `{"$bytes":base64,"$type":"Uint8Array"}`, a class instance with `toJSON()`
 *   `{"$class":name,"$json":...}`, with `toString()` `{"$class":name,"$text":...}`, else with
 *   its own fields `{"$class":name,"$fields":{...}}`. A plain object key that starts with `$`
 *   is written with one more `$`, so no plain object can pass for a tagged one.
 * - A function, a symbol, a WeakMap/WeakSet/Promise, a cycle, or a class instance with no
 *   observable state (only private `#fields` or getters) cannot be keyed: FailoverKeyError.
 *
 * Shared keys that remain are the Java ones, between values of different types that Java
 * prints alike: `42` and `'42'`, `true` and `'true'`, `null`, `undefined` and `'null'`, an
 * object with `toString()` and its text, a one-element list and its element, an empty list and
 * `''`, no argument and the single argument `'NO-ARG'`. An `undefined` object field is a
 * missing one. A parameter with one declared type never meets these.
 */
export class DefaultKeyGenerator implements KeyGenerator {
  key(args: readonly unknown[], context?: FailoverKeyContext): string {
    if (args.length === 0) return 'NO-ARG';
    if (args.length === 1) return this.guarded(args[0], 0, context);
    let key = '';
    for (let i = 0; i < args.length; i++) key += (i ? ':' : '') + this.guarded(args[i], i, context);
    return key;
  }

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
  protected part(value: unknown, inList = false): string {
    if (value === null || value === undefined) return 'null';
    switch (typeof value) {
      case 'string':
        return this.text(value);
      case 'number':
      case 'boolean':
      case 'bigint':
        return String(value);
      case 'function':
        throw new KeyEncodingError('', 'a function has no value to key');
      case 'symbol':
        throw new KeyEncodingError('', 'a symbol has no value to key');
    }
    const object = value as object;
    if (Array.isArray(object) && !inList) {
      let key = '';
      for (let i = 0; i < object.length; i++) {
        try {
          key += (i ? ',' : '') + this.part(object[i], true);
        } catch (error) {
          if (error instanceof KeyEncodingError)
            throw new KeyEncodingError(`[${i}]${error.path}`, error.reason);
          throw error;
        }
      }
      return key;
    }
    if (object instanceof Date && !Number.isNaN(object.getTime())) {
      const iso = object.toISOString();
      if (ISO_DATE.test(iso)) return iso;
    }
    const bytes = ArrayBuffer.isView(object) || object instanceof ArrayBuffer;
    if (
      !bytes &&
      !Array.isArray(object) &&
      !(object instanceof Date) &&
      !isPlainObject(object) &&
      ownMethod(object, 'toString')
    )
      return this.text(String(object));
    return JSON.stringify(this.canonical(object, new Set(), ''));
  }

  /** A string (or toString text) escaped so that it cannot read as anything else. */
  protected text(value: string): string {
    let text = NEEDS_ESCAPE.test(value) ? value.replace(SEPARATORS, '\\$&') : value;
    const first = text.charCodeAt(0);
    if (first === 0x7b /* { */ || first === 0x5b /* [ */ || DATE_PREFIX.test(text)) text = `\\${text}`;
    return text;
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
