import { TaggedKeyGenerator } from './tagged-key.generator';

/**
 * The default layer 1: byte-identical to the Java library (Société Générale's failover
 * `DefaultKeyGenerator`) for every value Java can express, so a Holdfast service and a Java
 * service can share one FAILOVER_STORE.
 *
 * - No arguments: `NO-ARG`. Arguments joined with `:`.
 * - Strings as they are (nothing escaped); numbers, bigints and booleans as their text;
 *   `null`/`undefined` as `` (empty); a list as its elements joined with `,`, nested lists
 *   flattened into it; an object whose class defines `toString()` (a value object, a `URL`):
 *   that text, as it is.
 * - What Java cannot express meaningfully gets an encoding no two distinct such values share:
 *   a valid Date its ISO text; everything else canonical JSON (keys sorted) in which values JSON
 *   cannot hold are tagged objects: a Set `{"$set":[...]}` (elements sorted), a Map
 *   `{"$map":[[k,v],...]}` (entries sorted by key), a nested Date `{"$date":iso}`, a BigInt
 *   `{"$bigint":"12"}`, `NaN`/`±Infinity` inside a value `{"$number":"NaN"}`, bytes (Buffer,
 *   typed arrays, ArrayBuffer) `{"$bytes":base64,"$type":"Uint8Array"}`, a class instance with
 *   `toJSON()` `{"$class":name,"$json":...}`, with `toString()` (inside a Set, Map or object)
 *   `{"$class":name,"$text":...}`, else with its own fields `{"$class":name,"$fields":{...}}`. A plain object key starting with `$` gets one more `$`,
 *   so no plain object passes for a tagged one. (A top-level `NaN`/`Infinity` is its text, as
 *   in Java.)
 * - A function, a symbol, a WeakMap/WeakSet/Promise, a cycle, or a class instance with no
 *   observable state (only private `#fields` or getters) cannot be keyed: FailoverKeyError
 *   naming the failover and the argument position.
 *
 * Java-compatible exceptions (argument lists that share a key, because Java gives them one):
 * - a string or `toString()` text containing `:` or `,` and the arguments or elements it reads
 *   as: `('a:b')` and `('a', 'b')`, `(['a,b'])` and `(['a', 'b'])`, `(['a', 'b'])` and `('a,b')`;
 * - values of different types printed alike: `42`, `42n` and `'42'`; `true` and `'true'`;
 *   `NaN` and `'NaN'`; a value object and its `toString()` text; no argument and `'NO-ARG'`;
 * - `null`, `undefined`, `''`, `[]` and `[null]`; `['a', null]` and `['a', '']`;
 * - nested and flat lists: `[[1, 2], [3]]` and `[1, 2, 3]`; a one-element list and its element;
 * - a string spelling the key of a value Java cannot express: a Date and its ISO text (or that
 *   text split at its colons into three arguments), an object and a string of its canonical JSON.
 * Numbers are JavaScript's text, which is Java's for a whole number the Java side holds in an
 * int, long or BigInteger and for a double with a fraction within 10^-3 <= |x| < 10^7; a Java
 * double holding a whole number (`2.0`), one outside that range (`1.0E7`, `1.0E-7`) or `-0.0`
 * prints otherwise, so such a parameter gets another key than Java's.
 *
 * Values Java cannot express never share a key with each other. A parameter with one declared
 * type and no `:`/`,` in its strings never meets these; a service that does not share the table
 * with Java can take InjectiveKeyGenerator instead (`keys: 'injective'`).
 */
export class DefaultKeyGenerator extends TaggedKeyGenerator {
  protected readonly absent = '';

  protected text(value: string): string {
    return value;
  }

  protected nestedList(list: readonly unknown[], path: string, open: readonly object[]): string {
    return this.list(list, path, [...open, list]);
  }
}
