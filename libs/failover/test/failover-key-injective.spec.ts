import fc from 'fast-check';
import {
  DefaultKeyGenerator,
  FailoverKeyError,
  InjectiveKeyGenerator,
  type KeyGenerator,
} from '@holdfast/failover';

/**
 * Distinct arguments never share a key. InjectiveKeyGenerator: the only shared keys left are
 * between values of different types printed alike; `javaText` below is that equivalence,
 * written independently of the generators: two argument lists may share a key only when it maps
 * them to the same string. DefaultKeyGenerator (the Java keys) meets the same model on argument
 * lists outside its documented Java-compatible exceptions, and shares keys inside them.
 */
const injective = new InjectiveKeyGenerator();
const java = new DefaultKeyGenerator();
const injectiveKey = (...args: unknown[]) => injective.key(args);
const javaKey = (...args: unknown[]) => java.key(args);
const GENERATORS: [string, KeyGenerator][] = [
  ['InjectiveKeyGenerator', injective],
  ['DefaultKeyGenerator', java],
];

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
}
class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal() {
    return this.#value;
  }
}
class GetterOnly {
  constructor(private readonly _hidden: string) {
    Object.defineProperty(this, '_hidden', { enumerable: false });
  }
  get value() {
    return this._hidden;
  }
}
class Tagged {
  readonly #id: string;
  constructor(id: string) {
    this.#id = id;
  }
  toJSON() {
    return { id: this.#id };
  }
}

/** A tag-exact description of a value (Sets and Maps order-free), for the model below. */
function exact(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (typeof value === 'number') return Object.is(value, -0) ? 'n:0' : `n:${value}`;
  if (typeof value === 'string') return `s:${JSON.stringify(value)}`;
  if (typeof value === 'boolean') return `b:${value}`;
  if (typeof value === 'bigint') return `i:${value}`;
  if (Array.isArray(value)) return `a[${value.map(exact).join(' ')}]`;
  if (value instanceof Date) return `d:${value.getTime()}`;
  if (value instanceof Set) return `set{${[...value].map(exact).sort().join(' ')}}`;
  if (value instanceof Map)
    return `map{${[...value]
      .map(([k, v]) => `${exact(k)}=>${exact(v)}`)
      .sort()
      .join(' ')}}`;
  if (ArrayBuffer.isView(value))
    return `bytes:${value.constructor.name}:${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`;
  const fields = Object.keys(value as object)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${exact((value as Record<string, unknown>)[k])}`);
  const proto = Object.getPrototypeOf(value);
  const kind = proto === Object.prototype || proto === null ? 'o' : `c:${proto.constructor.name}`;
  return `${kind}{${fields.join(' ')}}`;
}

/** Java's text for the values Java prints alike; exact description for everything else. */
function javaScalar(value: unknown): string {
  if (value === undefined || value === null) return 't:null';
  if (['string', 'number', 'boolean', 'bigint'].includes(typeof value))
    return `t:${Object.is(value, -0) ? '0' : String(value)}`;
  if (
    value instanceof Date &&
    !Number.isNaN(value.getTime()) &&
    value.getUTCFullYear() < 10000 &&
    value.getUTCFullYear() >= 0
  )
    return `date:${value.getTime()}`;
  return exact(value);
}

function javaArg(value: unknown): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return 't:';
    if (value.length === 1) return javaScalar(value[0]);
    return `list[${value.map(javaScalar).join(' ')}]`;
  }
  return javaScalar(value);
}

function javaText(args: unknown[]): string {
  if (args.length === 0 || (args.length === 1 && javaArg(args[0]) === 't:NO-ARG')) return 'NO-ARG';
  return args.map(javaArg).join(' | ');
}

// Strings rich in the characters a naive encoding would confuse.
const tricky = fc.string({
  unit: fc.constantFrom('a', 'b', ':', ',', '\\', '{', '[', '"', '$', '1', '-', 'T', 'n', 'u', 'l'),
  maxLength: 6,
});
const scalar = fc.oneof(
  tricky,
  fc.integer({ min: -3, max: 12 }),
  fc.double({ noDefaultInfinity: false }),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.bigInt({ min: -5n, max: 5n }),
  fc.date({ min: new Date('1999-01-01'), max: new Date('2001-01-01') }),
  fc.constantFrom('null', 'NO-ARG', '2000-01-01T00', '', '12', 'true'),
);
/** Values Java cannot express meaningfully, holding any value. */
const opaqueOf = (inner: fc.Arbitrary<unknown>): fc.Arbitrary<unknown>[] => [
  fc.dictionary(fc.constantFrom('a', 'b', '$set', '$$x', 'c:d'), inner, { maxKeys: 2 }),
  fc.uniqueArray(inner, { maxLength: 3, selector: exact }).map((a) => new Set(a)),
  fc
    .uniqueArray(fc.tuple(scalar, inner), { maxLength: 2, selector: ([k]) => exact(k) })
    .map((e) => new Map(e)),
  fc.uint8Array({ maxLength: 3 }),
  fc.uint8Array({ maxLength: 3 }).map((a) => Buffer.from(a)),
  fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 })).map(([x, y]) => new Point(x, y)),
];
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  any: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('any'), { maxLength: 3 }),
    ...opaqueOf(tie('any')),
  ),
})).any;
const argList = fc.array(value, { maxLength: 3 });

// Outside DefaultKeyGenerator's documented exceptions: strings without ':' / ',' (nor '{' / '['
// that would spell an object's JSON), no null, no list inside a list. Inside Sets, Maps and
// objects anything goes: that is the tagged JSON.
const javaString = fc.string({
  unit: fc.constantFrom('a', 'b', '\\', '"', '$', '1', '-', 'T', 'n', 'u', 'l', ' '),
  maxLength: 6,
});
const javaScalarValue = fc.oneof(
  javaString,
  fc.integer({ min: -3, max: 12 }),
  fc.double({ noDefaultInfinity: false }),
  fc.boolean(),
  fc.bigInt({ min: -5n, max: 5n }),
  fc.date({ min: new Date('1999-01-01'), max: new Date('2001-01-01') }),
  fc.constantFrom('NO-ARG', '', '12', 'true', 'null', 'NaN'),
);
const opaque = fc.oneof(...opaqueOf(value));
const javaElement = fc.oneof(javaScalarValue, opaque);
const javaArgument = fc.oneof(javaScalarValue, fc.array(javaElement, { maxLength: 3 }), opaque);
const javaArgList = fc.array(javaArgument, { maxLength: 3 });

describe('InjectiveKeyGenerator', () => {
  it('gives distinct keys to argument lists not printed alike (property)', () => {
    fc.assert(
      fc.property(argList, argList, (a, b) => {
        fc.pre(javaText(a) !== javaText(b));
        expect(injectiveKey(...a)).not.toBe(injectiveKey(...b));
      }),
      { numRuns: 4000 },
    );
  });

  it.each([
    ["'a:b' and ('a', 'b')", ['a:b'], ['a', 'b']],
    ["('a:b', 'c') and ('a', 'b:c')", ['a:b', 'c'], ['a', 'b:c']],
    ["['a,b'] and ['a', 'b']", [['a,b']], [['a', 'b']]],
    ["['a', 'b'] and 'a,b'", [['a', 'b']], ['a,b']],
    ['nested and flat lists', [[[1, 2], [3]]], [[1, 2, 3]]],
    ["null and ''", [null], ['']],
    ["['a', null] and ['a', '']", [['a', null]], [['a', '']]],
    [
      'a Date and its text split at the colons',
      [new Date('2026-01-02T03:04:05.006Z')],
      ['2026-01-02T03', '04', '05.006Z'],
    ],
    ['a plain object and a string of its JSON', [{ a: 1 }], ['{"a":1}']],
  ])("%s get distinct keys (DefaultKeyGenerator's Java exceptions)", (_what, a, b) => {
    expect(injectiveKey(...a)).not.toBe(injectiveKey(...b));
  });

  it('keeps the Java keys where no separator is involved, and writes null as null', () => {
    expect(injectiveKey()).toBe('NO-ARG');
    expect(injectiveKey('FR')).toBe('FR');
    expect(injectiveKey(42, true)).toBe('42:true');
    expect(injectiveKey(['a', 'b'], 'c')).toBe('a,b:c');
    expect(injectiveKey(null, undefined)).toBe('null:null');
    expect(injectiveKey(12345678901234567890n)).toBe('12345678901234567890');
    expect(injectiveKey('a:b,c')).toBe('a\\:b\\,c');
  });
});

describe('DefaultKeyGenerator (the Java keys)', () => {
  it('gives distinct keys to argument lists outside the Java-compatible exceptions (property)', () => {
    fc.assert(
      fc.property(javaArgList, javaArgList, (a, b) => {
        fc.pre(javaText(a) !== javaText(b));
        expect(javaKey(...a)).not.toBe(javaKey(...b));
      }),
      { numRuns: 4000 },
    );
  });

  it.each([
    ['separators', ['a:b,c'], 'a:b,c'],
    ['null', [null], ''],
    ['undefined among arguments', ['a', undefined, 1], 'a::1'],
    ['nested arrays', [[[1, 2], [3]]], '1,2,3'],
    ['an array with null', [['a', null, 'b']], 'a,,b'],
    ['an empty array', [[]], ''],
    ['a string starting with a brace', ['{x'], '{x'],
    ['a URL', [new URL('https://example.com/a?b=c')], 'https://example.com/a?b=c'],
    ['a big integer', [12345678901234567890n], '12345678901234567890'],
    ['NaN and Infinity', [NaN, -Infinity], 'NaN:-Infinity'],
  ])("writes %s as Java's DefaultKeyGenerator does", (_what, args, expected) => {
    expect(javaKey(...args)).toBe(expected);
  });

  it.each([
    ["'a:b' and ('a', 'b')", ['a:b'], ['a', 'b']],
    ["['a,b'] and ['a', 'b']", [['a,b']], [['a', 'b']]],
    ["['a', 'b'] and 'a,b'", [['a', 'b']], ['a,b']],
    ["42 and '42'", [42], ['42']],
    ["null, undefined, '', [] and [null]", [null], [undefined], [''], [[]], [[null]]],
    ["['a', null] and ['a', '']", [['a', null]], [['a', '']]],
    ['nested and flat lists', [[[1, 2], [3]]], [[1, 2, 3]]],
    ['a one-element list and its element', [['a']], ['a']],
    ["no argument and 'NO-ARG'", [], ['NO-ARG']],
    [
      'a Date and its text split at the colons',
      [new Date('2026-01-02T03:04:05.006Z')],
      ['2026-01-02T03', '04', '05.006Z'],
    ],
    ['a plain object and a string of its JSON', [{ a: 1 }], ['{"a":1}']],
  ])('shares one key between %s (documented Java-compatible exception)', (_what, ...lists) => {
    const keys = new Set(lists.map((args) => javaKey(...(args as unknown[]))));
    expect(keys.size).toBe(1);
  });
});

describe.each(GENERATORS)('%s', (_name, gen) => {
  const key = (...args: unknown[]) => gen.key(args);

  it('gives equal keys to equal values built in another order (property)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(tricky, { maxLength: 4 }), (items) => {
        expect(key(new Set(items))).toBe(key(new Set([...items].reverse())));
        expect(key(new Map(items.map((i) => [i, i.length])))).toBe(
          key(new Map([...items].reverse().map((i) => [i, i.length]))),
        );
      }),
    );
  });

  it.each([
    ['Sets', [new Set(['FR'])], [new Set(['DE'])]],
    ['Maps', [new Map([['a', 1]])], [new Map([['a', 2]])]],
    ['Map keys', [new Map([['a', 1]])], [new Map([['b', 1]])]],
    ['nested Sets', [new Set([new Set(['a']), new Set(['b'])])], [new Set([new Set(['a', 'b'])])]],
    ['Sets of strings with separators', [new Set(['a:b'])], [new Set(['a', 'b'])]],
    ['URLs', [new URL('https://example.com/a')], [new URL('https://example.com/b')]],
    ['buffers', [Buffer.from([1, 2])], [Buffer.from([1, 3])]],
    ['typed arrays of other types', [new Uint8Array([1])], [new Int8Array([1])]],
    ['class instances by fields', [new Point(1, 2)], [new Point(2, 1)]],
    ['toJSON with private fields', [new Tagged('x')], [new Tagged('y')]],
    ['a plain object and a tagged Set', [{ $set: ['a'] }], [new Set(['a'])]],
    ['a Set and a list', [new Set(['a', 'b'])], [['a', 'b']]],
    ['a Map and a plain object', [new Map([['a', 1]])], [{ a: 1 }]],
    ['BigInts in objects', [{ n: 1n }], [{ n: 2n }]],
    ['NaN and null in objects', [{ n: NaN }], [{ n: null }]],
    ['a Date and a Set', [new Date(0)], [new Set([new Date(0)])]],
  ])('%s get distinct keys', (_what, a, b) => {
    expect(key(...a)).not.toBe(key(...b));
  });

  it.each([
    ['a function', () => 1, ''],
    ['a symbol', Symbol('s'), ''],
    ['an instance with only private fields', new Secret('x'), ''],
    ['a getter-only instance', new GetterOnly('x'), ''],
    ['a WeakMap', new WeakMap(), ''],
    ['a function inside a list', ['a', () => 1], '[1]'],
    ['a symbol inside a nested list', ['a', [Symbol('s')]], '[1][0]'],
    ['a private-field instance inside a Set', new Set([new Secret('x')]), '{set}'],
  ])('refuses %s with a FailoverKeyError naming the failover and the position', (_what, bad, path) => {
    let error: unknown;
    try {
      gen.key(['ok', bad], { name: 'country-by-code', effectiveName: 'country', method: 'S.m' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FailoverKeyError);
    expect((error as FailoverKeyError).position).toBe(1);
    expect((error as FailoverKeyError).path).toBe(path);
    expect((error as Error).message).toContain("Failover 'country-by-code': argument 1");
  });

  it('refuses a cycle, in an object or in a list', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(() => key(cyclic)).toThrow(FailoverKeyError);
    const list: unknown[] = ['a'];
    list.push([list]);
    expect(() => key(list)).toThrow(FailoverKeyError);
  });
});
